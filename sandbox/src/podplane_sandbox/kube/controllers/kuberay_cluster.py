"""KubeRay's RayCluster controller (ray.io/v1), as the `kuberay` feature installs it: a head pod,
the worker pods of every worker group, the head Service and the cluster's status. Sources,
ray-project/kuberay (operator v1.7 line) `ray-operator/controllers/ray/`:

- raycluster_controller.go `buildHeadPod` / `buildWorkerPod`: pods named by `utils.PodName`
  with a generated suffix, `<cluster>-head-xxxxx` and `<cluster>-<group>-worker-xxxxx`, owned by
  the RayCluster (`SetControllerReference`), and the `CreatedHeadPod` / `CreatedWorkerPod` events.
- common/pod.go `labelPod`: `ray.io/is-ray-node=yes`, `ray.io/cluster`, `ray.io/node-type`
  (`head` | `worker`), `ray.io/group` (`headgroup` for the head, the group's name for workers),
  `ray.io/identifier=<cluster>-<type>`, `app.kubernetes.io/name=kuberay`,
  `app.kubernetes.io/created-by=kuberay-operator`; the template's labels are kept except those
  three. `BuildPod`: the Ray container runs `/bin/bash -c -- "ulimit -n ...; ray start ..."`
  (`generateRayStartCommand`, `setMissingRayStartParams`: `--block`, `--dashboard-host` and
  `--metrics-export-port` on the head, `--address=<head svc>:6379` on workers) and gets a
  memory-backed `/dev/shm` unless something is already mounted there (`addEmptyDir`).
- utils/util.go `GetWorkerGroupDesiredReplicas`: replicas clamped to [minReplicas, maxReplicas],
  times numOfHosts, 0 when the group is suspended; `GenerateHeadServiceName`: `<cluster>-head-svc`.
- `calculateStatus`: state `ready` once the head and every desired worker run, the worker
  counts, desired CPU/memory/GPU, `head.podName/podIP/serviceName`, the `HeadPodReady` and
  `RayClusterProvisioned` conditions (RayClusterStatusConditions gate, on by default).

Deleting the RayCluster deletes its pods through their owner references (the GC controller).
Nothing happens while the operator's Deployment (ray-system/kuberay-operator) has no ready
replica, nor before the feature's CRDs exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key, owner_ref
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, quantity

Obj = dict[str, Any]
CLUSTERS = "ray.io/rayclusters"
OPERATOR = ("ray-system", "kuberay-operator")
LOG_KIND = "sandbox.podplane.io/log-kind"  # which simulated log a pod writes (logs.py)
GPU = "nvidia.com/gpu"
GCS_PORT, DASHBOARD_PORT, CLIENT_PORT = 6379, 8265, 10001


def operator_ready(ctx: Ctx) -> bool:
    """KubeRay acts only while its operator runs and its CRDs are installed."""
    if ctx.store.registry.by_key(CLUSTERS) is None:
        return False
    dep = ctx.store.find("apps/deployments", *OPERATOR)
    return dep is not None and int((dep.get("status") or {}).get("readyReplicas", 0)) > 0


def head_service(cluster: str) -> str:
    return f"{cluster}-head-svc"


def dashboard_url(cluster: Obj) -> str:
    meta = cluster["metadata"]
    return f"{head_service(meta['name'])}.{meta['namespace']}.svc.cluster.local:{DASHBOARD_PORT}"


class RayClusters(Controller):
    primary = CLUSTERS

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        ns = meta.get("namespace", "")
        if event.rt_key == CLUSTERS:
            yield (ns, meta["name"])
        elif event.rt_key == "pods":
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == "RayCluster":
                    yield (ns, ref["name"])
        elif event.rt_key == "apps/deployments" and (ns, meta["name"]) == OPERATOR:
            yield from self.initial_keys()

    def initial_keys(self) -> Iterable[Key]:
        if self.ctx.store.registry.by_key(CLUSTERS) is None:
            return []
        return super().initial_keys()

    def reconcile(self, key: Key) -> float | None:
        if not operator_ready(self.ctx):
            return None
        cluster = self.primary_obj(key)
        if cluster is None or cluster["metadata"].get("deletionTimestamp"):
            return None
        self._service(cluster)
        pods = [p for p in self.ctx.owned(cluster, "pods")
                if not p["metadata"].get("deletionTimestamp")]
        heads = [p for p in pods if _label(p, "ray.io/node-type") == "head"]
        if not heads:
            heads = [self._create(cluster, "head", "headgroup",
                                  cluster["spec"]["headGroupSpec"])]
        workers = []
        for group in cluster["spec"].get("workerGroupSpecs") or []:
            mine = [p for p in pods if _label(p, "ray.io/node-type") == "worker"
                    and _label(p, "ray.io/group") == group["groupName"]]
            want = desired_workers(group)
            for _ in range(want - len(mine)):
                mine.append(self._create(cluster, "worker", group["groupName"], group))
            for extra in mine[want:]:
                self.ctx.delete("pods", extra)
            workers += mine[:want]
        self.ctx.update_status(CLUSTERS, cluster, self._status(cluster, heads[0], workers))
        return None

    def _service(self, cluster: Obj) -> None:
        meta = cluster["metadata"]
        name = head_service(meta["name"])
        if self.ctx.store.find("services", meta["namespace"], name) is not None:
            return
        self.ctx.create("services", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": meta["namespace"],
                         "labels": {"ray.io/cluster": meta["name"], "ray.io/node-type": "head",
                                    "app.kubernetes.io/name": "kuberay",
                                    "app.kubernetes.io/created-by": "kuberay-operator"},
                         "ownerReferences": [owner_ref(cluster)]},
            "spec": {"type": "ClusterIP",
                     "selector": {"ray.io/cluster": meta["name"], "ray.io/node-type": "head"},
                     "ports": [{"name": "gcs-server", "port": GCS_PORT},
                               {"name": "dashboard", "port": DASHBOARD_PORT},
                               {"name": "client", "port": CLIENT_PORT}]}})

    def _create(self, cluster: Obj, node_type: str, group: str, spec: Obj) -> Obj:
        pod = build_pod(cluster, node_type, group, spec)
        made = self.ctx.create_pod(cluster, pod)
        reason = "CreatedHeadPod" if node_type == "head" else "CreatedWorkerPod"
        self.ctx.event(cluster, reason, f"Created {node_type} Pod "
                       f"{made['metadata']['namespace']}/{made['metadata']['name']}")
        return made

    def _status(self, cluster: Obj, head: Obj, workers: list[Obj]) -> Obj:
        old = cluster.get("status") or {}
        status = clone(old)
        running = [p for p in [head, *workers] if _running(p)]
        desired = sum(desired_workers(g) for g in cluster["spec"].get("workerGroupSpecs") or [])
        ready = len(running) == desired + 1
        status.update(
            desiredWorkerReplicas=desired,
            readyWorkerReplicas=sum(1 for p in workers if _running(p)),
            availableWorkerReplicas=sum(1 for p in workers if _running(p)),
            minWorkerReplicas=sum(int(g.get("minReplicas") or 0)
                                  for g in cluster["spec"].get("workerGroupSpecs") or []),
            maxWorkerReplicas=sum(int(g.get("maxReplicas") or 0)
                                  for g in cluster["spec"].get("workerGroupSpecs") or []),
            desiredGPU=_qty(_desired(cluster, GPU)), desiredCPU=_qty(_desired(cluster, "cpu")),
            observedGeneration=cluster["metadata"].get("generation", 1),
            head={"podName": head["metadata"]["name"],
                  "podIP": (head.get("status") or {}).get("podIP", ""),
                  "serviceName": head_service(cluster["metadata"]["name"])})
        now = self.ctx.now_iso()
        head_ready = _running(head)
        status["conditions"] = [
            _condition(old, "HeadPodReady", head_ready, "HeadPodRunningAndReady"
                       if head_ready else "HeadPodNotReady", now),
            _condition(old, "RayClusterProvisioned", ready or _provisioned(old),
                       "AllPodRunningAndReadyFirstTime" if ready or _provisioned(old)
                       else "RayClusterPodsProvisioning", now)]
        if ready and old.get("state") != "ready":
            status["state"] = "ready"
            status.setdefault("stateTransitionTimes", {})["ready"] = now
        if status != old:
            status["lastUpdateTime"] = now
        return status


def desired_workers(group: Obj) -> int:
    if group.get("suspend"):
        return 0
    low = int(group.get("minReplicas") or 0)
    high = group.get("maxReplicas")
    replicas = group.get("replicas")
    want = low if replicas is None or int(replicas) < low else int(replicas)
    if high is not None:
        want = min(want, int(high))
    return want * int(group.get("numOfHosts") or 1)


def build_pod(cluster: Obj, node_type: str, group: str, spec: Obj) -> Obj:
    """A head or worker pod from its group's template, as common/pod.go builds it."""
    name = cluster["metadata"]["name"]
    template = clone(spec.get("template") or {})
    meta = template.get("metadata") or {}
    fixed = {"ray.io/node-type", "ray.io/group", "ray.io/cluster"}
    labels = {"ray.io/is-ray-node": "yes", "ray.io/cluster": name, "ray.io/node-type": node_type,
              "ray.io/group": group, "ray.io/identifier": f"{name}-{node_type}",
              "app.kubernetes.io/name": "kuberay",
              "app.kubernetes.io/created-by": "kuberay-operator",
              **{k: v for k, v in (meta.get("labels") or {}).items() if k not in fixed}}
    pod_spec = template.get("spec") or {}
    container = (pod_spec.get("containers") or [{}])[0]
    params = {str(k): str(v) for k, v in (spec.get("rayStartParams") or {}).items()}
    if node_type == "head":
        params.setdefault("dashboard-host", "0.0.0.0")
        start = "ray start --head"
    else:
        params.setdefault("address", f"{head_service(name)}.{cluster['metadata']['namespace']}"
                          f".svc.cluster.local:{GCS_PORT}")
        start = "ray start"
    params.setdefault("metrics-export-port", "8080")
    gpus = _limits(container).get(GPU)
    if gpus:
        params.setdefault("num-gpus", str(gpus))
    params["block"] = "true"
    flags = " ".join(f"--{k}" if v == "true" and k == "block" else f"--{k}={v}"
                     for k, v in sorted(params.items()))
    given = " ".join([*(container.get("command") or []), *(container.get("args") or [])])
    if "ray start" not in given:
        run = f"ulimit -n ${{RAY_START_ULIMIT_OPEN_FILES:-65536}}; {start} {flags}"
        container["command"] = ["/bin/bash", "-c", "--"]
        container["args"] = [f"{given} && {run}" if given else run]
    container.setdefault("env", []).extend([
        {"name": "RAY_CLUSTER_NAME", "value": name},
        {"name": "RAY_CLUSTER_NAMESPACE", "value": cluster["metadata"]["namespace"]},
        {"name": "KUBERAY_GEN_RAY_START_CMD", "value": f"{start} {flags}"}])
    if not any(m.get("mountPath") == "/dev/shm" for m in container.get("volumeMounts") or []):
        container.setdefault("volumeMounts", []).append({"name": "shared-mem",
                                                          "mountPath": "/dev/shm"})
        pod_spec.setdefault("volumes", []).append({"name": "shared-mem",
                                                   "emptyDir": {"medium": "Memory"}})
    base = name if node_type == "head" else f"{name}-{group}"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": f"{base[:50]}-{node_type}-".lower(),
                         "namespace": cluster["metadata"]["namespace"], "labels": labels,
                         "annotations": {**(meta.get("annotations") or {}),
                                         LOG_KIND: f"ray-{node_type}"},
                         "ownerReferences": [owner_ref(cluster)]},
            "spec": pod_spec}


def _limits(container: Obj) -> dict[str, Any]:
    res = container.get("resources") or {}
    return {**(res.get("requests") or {}), **(res.get("limits") or {})}


def _desired(cluster: Obj, resource: str) -> float:
    """The cluster's total of one resource: head + every desired worker (calculateStatus)."""
    def of(spec: Obj) -> float:
        containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
        return sum(quantity(_limits(c).get(resource, 0)) for c in containers)
    total = of(cluster["spec"]["headGroupSpec"])
    for group in cluster["spec"].get("workerGroupSpecs") or []:
        total += of(group) * desired_workers(group)
    return total


def _qty(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _condition(old: Obj, kind: str, true: bool, reason: str, now: str) -> Obj:
    flag = "True" if true else "False"
    prior = next((c for c in old.get("conditions") or [] if c.get("type") == kind), None)
    since = prior["lastTransitionTime"] if prior and prior.get("status") == flag else now
    return {"type": kind, "status": flag, "reason": reason, "message": "",
            "lastTransitionTime": since}


def _provisioned(status: Obj) -> bool:
    return any(c.get("type") == "RayClusterProvisioned" and c.get("status") == "True"
               for c in status.get("conditions") or [])


def _running(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and all(
        cs.get("ready") for cs in status.get("containerStatuses") or [{}])


def _label(pod: Obj, key: str) -> str | None:
    return (pod["metadata"].get("labels") or {}).get(key)
