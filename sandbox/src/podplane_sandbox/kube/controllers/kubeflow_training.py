"""Kubeflow's training operator for PyTorchJob (kubeflow.org/v1), as the HyperPod dependencies
chart installs it (Deployment `dependencies-training-operators` in `kubeflow`). docs/sandbox.md,
"Kubeflow training operator", lists each rule with its source (kubeflow/training-operator v1,
pkg/controller.v1/pytorch and pkg/controller.v1/common):

- Nothing happens until the operator's Deployment has a ready replica.
- A job that fails `ValidateV1PyTorchJob` (a name that is not DNS-1035, ...) gets one Warning
  event `PyTorchJobFailedValidation` and nothing else (kubeflow_validation.py).
- One pod per replica of each `pytorchReplicaSpecs` entry, named `<job>-<type>-<index>` with
  the type lower-cased, labelled `training.kubeflow.org/job-name`, `.../replica-type`,
  `.../replica-index` and `.../operator-name: pytorchjob-controller` (common/util.go
  GenLabels), owned by the job. The replica's `restartPolicy` (OnFailure, Never, Always; ExitCode
  as OnFailure) becomes the pod's, so the kubelet restarts failed containers in place.
- Every container of a pod gets the rendezvous as environment variables, appended after its own
  (`pytorch/envvar.go` `setPodEnv`, `master.go`, `elastic.go`): PYTHONUNBUFFERED; with a
  Master, MASTER_ADDR / PET_MASTER_ADDR (`<job>-master-0`), MASTER_PORT / PET_MASTER_PORT (the
  `pytorch` container's port `pytorchjob-port`, 23456 by default, added when absent:
  `pytorch_defaults.go`), WORLD_SIZE (replicas x nprocPerNode, 1 when that is not a number),
  RANK and PET_NODE_RANK (the node: Master 0, Worker i is i+1), PET_NPROC_PER_NODE
  (`nprocPerNode`, default `auto`); PET_NNODES (the replicas, `min:max` when elastic). Nothing
  else: a launcher reads what its source reads from these (launchers.py).
- Conditions (the CRD's JobCondition): Created, Running once every pod runs, Succeeded when
  the Master (else every Worker) succeeded, Failed when a pod failed for good or when the
  pods' container restarts exceed `runPolicy.backoffLimit` (reason BackoffLimitExceeded).
- `runPolicy.suspend` true deletes the job's pods and sets Suspended (the CRD's description
  of `suspend`); lifting it makes them again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.controllers import kubeflow_validation
from podplane_sandbox.kube.controllers.framework import Controller, Key, owner_ref
from podplane_sandbox.kube.controllers.training_faults import set_condition, suspended
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
JOBS = "kubeflow.org/pytorchjobs"
KIND = "PyTorchJob"
OPERATOR = ("kubeflow", "dependencies-training-operators")
PREFIX = "training.kubeflow.org/"
PORT_NAME, DEFAULT_PORT = "pytorchjob-port", 23456  # pytorch_types.go
CONTAINER = "pytorch"
DONE = ("Succeeded", "Failed")


class KubeflowPyTorchJobs(Controller):
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
            yield from self.initial_keys()

    def initial_keys(self) -> Iterable[Key]:
        if self.ctx.store.registry.by_key(JOBS) is None:
            return []
        return super().initial_keys()

    def reconcile(self, key: Key) -> float | None:
        if self.ctx.store.registry.by_key(JOBS) is None:
            return None
        job = self.primary_obj(key)
        if job is None or job["metadata"].get("deletionTimestamp") or not self._running():
            return None
        refused = kubeflow_validation.refusal(job)
        if refused is not None:
            self._refuse(job, refused)
            return None
        status = clone(job.get("status") or {})
        now = self.ctx.now_iso()
        if any(c.get("type") in DONE and c.get("status") == "True"
               for c in status.get("conditions") or []):
            return None
        if not status.get("conditions"):
            status["startTime"] = now
            set_condition(status, "Created", True, now, reason="PyTorchJobCreated",
                          message=f"PyTorchJob {job['metadata']['name']} is created.")
        pods = {p["metadata"]["name"]: p for p in self.ctx.owned(job, "pods")}
        wanted = list(_replicas(job))
        if suspended(job):
            for pod in pods.values():
                self.ctx.delete("pods", pod)
            set_condition(status, "Running", False, now, only_if_present=True)
            set_condition(status, "Suspended", True, now, reason="PyTorchJobSuspended",
                          message=f"PyTorchJob {job['metadata']['name']} is suspended.")
        else:
            set_condition(status, "Suspended", False, now, only_if_present=True)
            for rank, (name, rtype, index, template, policy) in enumerate(wanted):
                if name not in pods:
                    pods[name] = self.ctx.create_pod(job, _pod(job, name, rtype, index,
                                                               template, policy, rank))
            self._conditions(job, status, [pods[w[0]] for w in wanted], now)
        self.ctx.update_status(JOBS, job, status)
        return None

    def _refuse(self, job: Obj, message: str) -> None:
        """The operator's Warning event, once per job (its recorder counts repeats)."""
        uid = job["metadata"].get("uid")
        for event in self.ctx.store.items("events", job["metadata"].get("namespace", "")):
            if (event.get("involvedObject") or {}).get("uid") == uid and \
                    event.get("reason") == kubeflow_validation.REASON:
                return
        self.ctx.event(job, kubeflow_validation.REASON, message, "Warning")

    def _running(self) -> bool:
        dep = self.ctx.store.find("apps/deployments", *OPERATOR)
        return dep is not None and int((dep.get("status") or {}).get("readyReplicas", 0)) > 0

    def _conditions(self, job: Obj, status: Obj, pods: list[Obj], now: str) -> None:
        name = job["metadata"]["name"]
        phases = {p["metadata"]["name"]: (p.get("status") or {}).get("phase", "Pending")
                  for p in pods}
        restarts = sum(int(cs.get("restartCount") or 0) for p in pods
                       for cs in (p.get("status") or {}).get("containerStatuses") or [])
        limit = ((job.get("spec") or {}).get("runPolicy") or {}).get("backoffLimit")
        masters = [n for n in phases if "-master-" in n] or list(phases)
        if "Failed" in phases.values() or (limit is not None and restarts > int(limit)):
            reason = "BackoffLimitExceeded" if "Failed" not in phases.values() \
                else "PyTorchJobFailed"
            set_condition(status, "Running", False, now, only_if_present=True)
            set_condition(status, "Failed", True, now, reason=reason,
                          message=f"PyTorchJob {name} has failed ({restarts} restarts, "
                          f"backoffLimit {limit}).")
        elif masters and all(phases[n] == "Succeeded" for n in masters):
            set_condition(status, "Running", False, now, only_if_present=True)
            set_condition(status, "Succeeded", True, now, reason="PyTorchJobSucceeded",
                          message=f"PyTorchJob {name} is successfully completed.")
            status["completionTime"] = now
        elif all(ph in ("Running", "Succeeded") for ph in phases.values()):
            set_condition(status, "Running", True, now, reason="PyTorchJobRunning",
                          message=f"PyTorchJob {name} is running.")
        counts: dict[str, Obj] = {}
        for pod_name, phase in phases.items():
            rtype = pod_name.rsplit("-", 2)[-2].capitalize()
            bucket = counts.setdefault(rtype, {"active": 0, "succeeded": 0, "failed": 0})
            key = {"Succeeded": "succeeded", "Failed": "failed"}.get(phase, "active")
            bucket[key] += 1
        status["replicaStatuses"] = counts


def _replicas(job: Obj) -> Iterable[tuple[str, str, int, Obj, str]]:
    """(pod name, replica type, index, template, restart policy), Master first."""
    specs = (job.get("spec") or {}).get("pytorchReplicaSpecs") or {}
    for rtype in sorted(specs, key=lambda t: (t != "Master", t)):
        spec = specs[rtype] or {}
        policy = spec.get("restartPolicy") or "Never"
        for i in range(int(spec.get("replicas") or 0)):
            yield (f"{job['metadata']['name']}-{rtype.lower()}-{i}", rtype, i,
                   spec.get("template") or {}, "OnFailure" if policy == "ExitCode" else policy)


def _pod(job: Obj, name: str, rtype: str, index: int, template: Obj, policy: str,
         rank: int) -> Obj:
    meta = template.get("metadata") or {}
    spec = clone(template.get("spec") or {})
    spec["restartPolicy"] = policy
    _default_port(spec)
    for container in spec.get("containers") or []:
        container["env"] = [*(container.get("env") or []), *rendezvous(job, rank)]
    labels = {**(meta.get("labels") or {}), PREFIX + "job-name": job["metadata"]["name"],
              PREFIX + "replica-type": rtype.lower(), PREFIX + "replica-index": str(index),
              PREFIX + "operator-name": "pytorchjob-controller"}
    if rtype == "Master":
        labels[PREFIX + "job-role"] = "master"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": job["metadata"]["namespace"],
                         "labels": labels, "annotations": dict(meta.get("annotations") or {}),
                         "ownerReferences": [owner_ref(job)]},
            "spec": spec}


def _default_port(spec: Obj) -> None:
    """`setPyTorchDefaultPort`: the `pytorch` container gets `pytorchjob-port` if absent."""
    for container in spec.get("containers") or []:
        ports = container.setdefault("ports", [])
        if container.get("name") == CONTAINER and all(p.get("name") != PORT_NAME
                                                      for p in ports):
            ports.append({"name": PORT_NAME, "containerPort": DEFAULT_PORT,
                          "protocol": "TCP"})


def rendezvous(job: Obj, rank: int) -> list[Obj]:
    """The variables `setPodEnv` appends to every container of node `rank`'s pod."""
    spec = job.get("spec") or {}
    specs = spec.get("pytorchReplicaSpecs") or {}
    total = sum(int((s or {}).get("replicas") or 0) for s in specs.values())
    nproc = str(spec.get("nprocPerNode") or "auto")
    env = {"PYTHONUNBUFFERED": "1"}
    if "Master" in specs:
        port, addr = str(_master_port(specs["Master"])), f"{job['metadata']['name']}-master-0"
        env.update({"MASTER_PORT": port, "PET_MASTER_PORT": port, "MASTER_ADDR": addr,
                    "PET_MASTER_ADDR": addr,
                    "WORLD_SIZE": str(total * (int(nproc) if nproc.isdigit() else 1)),
                    "RANK": str(rank), "PET_NPROC_PER_NODE": nproc,
                    "PET_NODE_RANK": str(rank)})
    elastic = spec.get("elasticPolicy")
    if elastic is not None:
        low, high = elastic.get("minReplicas"), elastic.get("maxReplicas")
        env["PET_NNODES"] = str(high) if low == high else f"{low}:{high}"
    else:
        env["PET_NNODES"] = str(total)
    return [{"name": k, "value": v} for k, v in env.items()]


def _master_port(master: Obj) -> int:
    for container in ((master.get("template") or {}).get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or [] if container.get("name") == CONTAINER else []:
            if port.get("name") == PORT_NAME:
                return int(port.get("containerPort") or DEFAULT_PORT)
    return DEFAULT_PORT
