"""The HyperPod training operator (EKS add-on `amazon-sagemaker-hyperpod-training-operator`):
HyperPodPyTorchJob -> pods -> job conditions. docs/sandbox.md, "HyperPod training operator",
lists each rule with its source; in short:

- Nothing happens to a job until the operator's controller runs (its Deployment in
  `aws-hyperpod` has a ready replica): the custom resource just sits there, without status.
- One pod per replica of each `replicaSpecs[]` entry, named `<job>-<replica spec>-<index>` and
  labelled `HPJob=<job>` (the names and the label the official HyperPod CLI lists and reads:
  sagemaker-hyperpod `HyperPodPytorchJob.list_pods`, its example `demo-pod-0`, its integration
  test's `<job>-pod-`), from the spec's pod template, owned by the job (deleting the job deletes
  them). The scheduler then places them like any pod: Pending while no Ready node fits.
- Conditions in the order the CLI reads them (`hyp list` shows the last True one, its age from
  `Created`): Created when the operator first sees the job, Running once every pod runs,
  Completed when every pod succeeded, Failed when one failed (Running turns False) - the states
  the CLI's integration tests wait for (Created -> Running -> Completed). The status carries
  only fields of the SDK's `HyperPodPytorchJobStatus` (it forbids others).
- Workers per pod follow `nprocPerNode` as PyTorch's launcher resolves it, which the HyperPod
  elastic agent extends (torch.distributed.run `determine_local_world_size`): an int, `gpu`
  (the GPUs the container was given; none is "Cuda is not available."), `cpu`, `auto`; any
  other value is "Unsupported nproc_per_node value". A launcher error fails the pod at start.

Restarts after a fault (training_faults.py, with its sources): a pod that failed, or whose
node HyperPod marked for reboot or replacement, restarts the whole job while
`runPolicy.jobMaxRetryCount` allows (`status.restartCount` counts them,
`latestFaultyPodInstanceList` names the node, pod and rank), and fails it once spent.
A rule of `runPolicy.logMonitoringConfiguration` that finds a running pod HANGING or SLOW is
such a fault too (log_monitoring.py). `runPolicy.suspend` deletes the job's pods and creates
none until it is lifted. Sources are
silent on `cleanPodPolicy`: the sandbox deletes no pod when a job ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.addon_manifests import TRAINING_OPERATOR_NS, TRAINING_OPERATOR_SA
from podplane_sandbox.kube.controllers.framework import Controller, Key, owner_ref
from podplane_sandbox.kube.controllers.kubelet import DURATION, EXIT_CODE
from podplane_sandbox.kube.controllers.log_monitoring import log_faults
from podplane_sandbox.kube.controllers.training_faults import (
    faults_of,
    restart_or_fail,
    set_condition,
    suspended,
)
from podplane_sandbox.kube.hyperpod_training_crd import GROUP, KIND, PLURAL
from podplane_sandbox.kube.logs import LAUNCHER_ERROR, NNODES, NODE_RANK, NPROC
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, quantity

Obj = dict[str, Any]
JOBS = f"{GROUP}/{PLURAL}"
JOB_LABEL = "HPJob"
GPU = "nvidia.com/gpu"
DONE = ("Completed", "Failed")


class TrainingOperator(Controller):
    primary = JOBS

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        ns = meta.get("namespace", "")
        if event.rt_key == JOBS:
            yield (ns, meta["name"])
        elif event.rt_key == "pods":
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == KIND:
                    yield (ns, ref["name"])
        elif event.rt_key == "apps/deployments" and (ns, meta["name"]) == OPERATOR:
            yield from self.initial_keys()  # the controller (re)started: it looks at every job
        elif event.rt_key == "nodes":  # a health verdict changed: the jobs with pods there
            for pod in self.ctx.store.items("pods"):
                if (pod.get("spec") or {}).get("nodeName") == meta["name"]:
                    for ref in pod["metadata"].get("ownerReferences") or []:
                        if ref.get("controller") and ref.get("kind") == KIND:
                            yield (pod["metadata"].get("namespace", ""), ref["name"])

    def reconcile(self, key: Key) -> float | None:
        job = self.primary_obj(key)
        if job is None or job["metadata"].get("deletionTimestamp") or not self._running():
            return None
        recheck: float | None = None  # log monitoring: when a rule could next break
        status = clone(job.get("status") or {})
        if _true(status, *DONE):
            return None
        if not _true(status, "Created"):
            status["startTime"] = self.ctx.now_iso()
            set_condition(status, "Created", True, self.ctx.now_iso())
        pods = {p["metadata"]["name"]: p for p in self.ctx.owned(job, "pods")}
        live = {n: p for n, p in pods.items() if not p["metadata"].get("deletionTimestamp")}
        wanted = list(_replicas(job))
        if suspended(job):
            self._stop(live.values())
            set_condition(status, "Running", False, self.ctx.now_iso(), only_if_present=True)
        elif faults := faults_of(self.ctx, [live[n] for n, _ in wanted if n in live]):
            if restart_or_fail(self.ctx, job, status, faults, [n for n, _ in wanted]):
                self._stop(live.values())
        else:
            for rank, (name, template) in enumerate(wanted):
                if name not in pods:  # a pod still terminating is replaced once it is gone
                    pods[name] = live[name] = self.ctx.create_pod(
                        job, _pod(job, name, template, rank, len(wanted)))
            if all(name in live for name, _ in wanted):
                mine = [live[name] for name, _ in wanted]
                hung, recheck = log_faults(self.ctx, job, mine)
                if hung and restart_or_fail(self.ctx, job, status, hung, [n for n, _ in wanted]):
                    self._stop(live.values())
                elif not hung:
                    self._conditions(status, mine)
        self.ctx.update_status(JOBS, job, status)
        return recheck

    def _stop(self, pods: Iterable[Obj]) -> None:
        for pod in pods:
            self.ctx.delete("pods", pod)

    def _running(self) -> bool:
        """The operator acts only while its controller Deployment has a ready replica."""
        dep = self.ctx.store.find("apps/deployments", *OPERATOR)
        return dep is not None and int((dep.get("status") or {}).get("readyReplicas", 0)) > 0

    def _conditions(self, status: Obj, pods: list[Obj]) -> None:
        phases = [(p.get("status") or {}).get("phase", "Pending") for p in pods]
        now = self.ctx.now_iso()
        if not pods:
            return
        if "Failed" in phases or all(ph == "Succeeded" for ph in phases):
            set_condition(status, "Running", False, now, only_if_present=True)
            set_condition(status, "Failed" if "Failed" in phases else "Completed", True, now)
            if "Failed" not in phases:
                status["completionTime"] = now
        elif all(ph in ("Running", "Succeeded") for ph in phases):
            set_condition(status, "Running", True, now)


OPERATOR = (TRAINING_OPERATOR_NS, TRAINING_OPERATOR_SA)


def _replicas(job: Obj) -> Iterable[tuple[str, Obj]]:
    """(pod name, pod template) for every replica, in the spec's order."""
    name = job["metadata"]["name"]
    for spec in (job.get("spec") or {}).get("replicaSpecs") or []:
        for i in range(int(spec.get("replicas") or 0)):
            yield f"{name}-{spec['name']}-{i}", spec.get("template") or {}


def _pod(job: Obj, name: str, template: Obj, rank: int, nnodes: int) -> Obj:
    meta = template.get("metadata") or {}
    spec = clone(template.get("spec") or {})
    # the operator restarts workers itself, and its jobs complete: kubelet must not restart them
    spec.setdefault("restartPolicy", "Never")
    annotations = {**(meta.get("annotations") or {}), NODE_RANK: str(rank),
                   NNODES: str(nnodes)}
    nproc = local_world_size(str((job.get("spec") or {}).get("nprocPerNode", "auto")), spec)
    if isinstance(nproc, int):
        annotations[NPROC] = str(nproc)
    elif nproc is not None:  # the launcher stops at once: the container exits 1
        annotations.update({LAUNCHER_ERROR: nproc, DURATION: "1", EXIT_CODE: "1"})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": job["metadata"]["namespace"],
                         "labels": {**(meta.get("labels") or {}),
                                    JOB_LABEL: job["metadata"]["name"]},
                         "annotations": annotations, "ownerReferences": [owner_ref(job)]},
            "spec": spec}


def local_world_size(value: str, spec: Obj) -> int | str | None:
    """Workers per pod as torchrun resolves `--nproc-per-node`: an int, or the launcher's
    ValueError text, or None when it depends on the node's CPU count (`cpu`, `auto` without
    GPUs), which the pod does not know before it is scheduled."""
    try:
        return int(value)
    except ValueError:
        pass
    containers = spec.get("containers") or [{}]
    resources = containers[0].get("resources") or {}
    gpus = int(quantity({**(resources.get("requests") or {}),
                         **(resources.get("limits") or {})}.get(GPU, 0)))
    if value == "gpu":
        return gpus if gpus else "ValueError: Cuda is not available."
    if value == "auto":
        return gpus or None
    if value == "cpu":
        return None
    return f"ValueError: Unsupported nproc_per_node value: {value}"


def _true(status: Obj, *kinds: str) -> bool:
    return any(c.get("type") in kinds and c.get("status") == "True"
               for c in status.get("conditions") or [])
