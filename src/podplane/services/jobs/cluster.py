"""What job work reads from a cluster, fresh every time: the job objects of every kind, their
pods, the nodes those pods run on, events, and the chosen instance group's GPUs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
from podplane.domain.jobs import render as rj
from podplane.domain.jobs.kinds import GROUP_LABEL, HEALTH_LABEL, KINDS, NAMESPACE, RAY, Kind
from podplane.domain.jobs.render import GPU
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.groups import cloud as gc
from podplane.store import clusters as cluster_rows

Shape = dict[str, Any]
EFA = "vpc.amazonaws.com/efa"


async def kube_of(ctx: Ctx, cluster: str) -> tuple[gc.ClusterRef, KubePort]:
    ref = await gc.cluster_ref(ctx, cluster)
    return ref, await cloud_of(ctx.app).kube_for(ref.eks)


async def bucket_of(ctx: Ctx, cluster: str) -> str | None:
    async with ctx.app.sessions() as db:
        row = await cluster_rows.get(db, cluster)
    return ((row.facts or {}).get("bucket") if row else None) or None


FILES_SHOWN = 100  # per job view; the bucket keeps every file


async def files_of(ctx: Ctx, bucket: str | None, job: str) -> list[Shape] | None:
    """The objects under the job's checkpoint and output prefixes (what its pods saved through
    the bucket mount), newest first; None when the bucket cannot be read."""
    if bucket is None:
        return []
    found: list[Shape] = []
    try:
        for kind, prefix in rj.prefixes(bucket, job).items():
            key_prefix = (prefix or "").removeprefix(f"s3://{bucket}/")
            for obj in await cloud_of(ctx.app).aws.s3.list_objects(bucket, key_prefix):
                found.append({"kind": kind, "key": obj["Key"], "size": int(obj.get("Size", 0)),
                              "last_modified": obj.get("LastModified")})
    except CloudError:
        return None
    found.sort(key=lambda f: (str(f["last_modified"]), f["key"]), reverse=True)
    return found[:FILES_SHOWN]


async def jobs_of_kind(kube: KubePort, kind: Kind) -> list[Shape]:
    """The jobs of one kind; none when its operator (its CRD) is not installed."""
    try:
        return await kube.list(kind.api_version, kind.kind, namespace=NAMESPACE)
    except NotFound:
        return []


async def find_job(kube: KubePort, cluster: str, name: str) -> Shape:
    for kind in KINDS.values():
        try:
            found = await kube.get(kind.api_version, kind.kind, name, NAMESPACE)
        except NotFound:
            continue
        if found is not None:
            return found
    raise NotFound(f"Cluster {cluster!r} has no job {name!r}.",
                   hint="List jobs with job_list (GET .../jobs).")


async def pods_of(kube: KubePort, job: Shape) -> list[Shape]:
    kind = KINDS[str(job["kind"])]
    if kind is RAY:  # its submitter's pods and its RayCluster's (services/jobs/ray.py)
        from podplane.services.jobs import ray

        return await ray.pods(kube, job)
    return await kube.list("v1", "Pod", namespace=NAMESPACE,
                           labels=kind.selector(job["metadata"]["name"]))


async def nodes_by_name(kube: KubePort) -> dict[str, Shape]:
    return {n["metadata"]["name"]: n for n in await kube.list("v1", "Node")}


async def events_of(kube: KubePort, job: Shape, pods: list[Shape]) -> list[Shape]:
    """Events about the job and its pods, oldest first."""
    names = {job["metadata"]["name"], *(p["metadata"]["name"] for p in pods)}
    found = [e for e in await kube.list("v1", "Event", namespace=NAMESPACE)
             if (e.get("involvedObject") or {}).get("name") in names]
    return sorted(found, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))


@dataclass(frozen=True)
class GroupGpus:
    nodes: int
    healthy_nodes: int
    gpus_per_node: int
    efa_per_node: int
    free_by_node: dict[str, int]

    @property
    def free(self) -> int:
        return sum(self.free_by_node.values())

    def fits(self, gpus: int) -> int:
        """How many replicas of `gpus` GPUs the healthy nodes can take now."""
        if gpus == 0:
            return self.healthy_nodes * 1000
        return sum(free // gpus for free in self.free_by_node.values())


async def group_gpus(kube: KubePort, group: str) -> GroupGpus:
    """GPUs of the group's Kubernetes nodes."""
    return await labelled_gpus(kube, {GROUP_LABEL: group})


async def labelled_gpus(kube: KubePort, labels: dict[str, str]) -> GroupGpus:
    """GPUs of the nodes with these labels: allocatable per node, free on the healthy ones
    (allocatable minus what unfinished pods there request)."""
    nodes = await kube.list("v1", "Node", labels=labels)
    used: dict[str, int] = {}
    for pod in await kube.list("v1", "Pod"):
        where = (pod.get("spec") or {}).get("nodeName")
        if where and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            used[where] = used.get(where, 0) + requested_gpus(pod)
    free, per_node, efa = {}, 0, 0
    for node in nodes:
        alloc = (node.get("status") or {}).get("allocatable") or {}
        gpus = int(str(alloc.get(GPU, 0)))
        per_node, efa = max(per_node, gpus), max(efa, int(str(alloc.get(EFA, 0))))
        labels = node["metadata"].get("labels") or {}
        if labels.get(HEALTH_LABEL) == "Schedulable" and not (node.get("spec") or {}).get(
                "unschedulable"):
            free[node["metadata"]["name"]] = max(gpus - used.get(node["metadata"]["name"], 0), 0)
    return GroupGpus(len(nodes), len(free), per_node, efa, free)


def requested_gpus(pod: Shape) -> int:
    """GPUs a pod (or a pod template) requests, limits winning."""
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        total += int(str({**(res.get("requests") or {}), **(res.get("limits") or {})}
                         .get(GPU, 0)))
    return total
