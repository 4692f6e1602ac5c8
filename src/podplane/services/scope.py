"""The kernel every capability room shares: where a managed cluster lives (its ref, its
HyperPod description and groups), its Kubernetes client and bucket, and the GPU room of a
set of nodes. Rooms import it; it imports no room."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from podplane.cloud.ports_aws import HyperPodPort
from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import Conflict, InvalidInput, NotFound
from podplane.domain.jobs.kinds import HEALTH_LABEL
from podplane.domain.jobs.render import GPU
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.store import clusters as cluster_rows

Shape = dict[str, Any]
EFA = "vpc.amazonaws.com/efa"


@dataclass(frozen=True)
class ClusterRef:
    """Where a managed cluster lives; carried in operation params (stable for its life)."""

    name: str
    hyperpod: str
    eks: str
    vpc_id: str | None = None

    def params(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, params: dict[str, Any]) -> ClusterRef:
        return cls(**params["cluster_ref"])


async def cluster_ref(ctx: Ctx, name: str) -> ClusterRef:
    async with ctx.app.sessions() as db:
        row = await cluster_rows.get(db, name)
    if row is None:
        raise NotFound(f"No managed cluster named {name!r}.",
                       hint="List clusters with GET /api/v1/clusters, or import it first.")
    if not row.hyperpod_cluster_name:
        raise Conflict(f"Cluster {name!r} has no HyperPod cluster yet.",
                       hint="Wait until the cluster's creation has finished.")
    facts = row.facts or {}
    vpc_id = facts.get("vpc_id") or (facts.get("network") or {}).get("vpc_id")
    return ClusterRef(name, row.hyperpod_cluster_name, row.eks_cluster_name, vpc_id)


async def describe(hyperpod: HyperPodPort, ref: ClusterRef) -> Shape:
    found = await hyperpod.describe_cluster(ref.hyperpod)
    if found is None:
        raise NotFound(f"The HyperPod cluster {ref.hyperpod} of {ref.name!r} does not exist "
                       "in AWS.", hint="It may have been deleted outside podplane.")
    return found


def groups_of(described: Shape) -> list[Shape]:
    return list(described.get("InstanceGroups") or [])


def find_group(described: Shape, name: str) -> Shape | None:
    return next((g for g in groups_of(described) if g.get("InstanceGroupName") == name), None)


def require_group(described: Shape, ref: ClusterRef, name: str) -> Shape:
    group = find_group(described, name)
    if group is None:
        names = ", ".join(g["InstanceGroupName"] for g in groups_of(described)) or "none"
        raise NotFound(f"Cluster {ref.name!r} has no instance group {name!r}.",
                       hint=f"Its groups: {names}.")
    return group


def chosen_group(described: Shape, cluster: str, name: str) -> Shape:
    """The group a request body names to run on: a wrong name is that field's error (422)."""
    group = find_group(described, name)
    if group is None:
        raise InvalidInput(f"Cluster {cluster!r} has no instance group {name!r}.",
                           field="instance_group",
                           hint="List groups with instance_group_list.")
    return group


async def kube_of(ctx: Ctx, cluster: str) -> tuple[ClusterRef, KubePort]:
    ref = await cluster_ref(ctx, cluster)
    return ref, await cloud_of(ctx.app).kube_for(ref.eks)


async def bucket_of(ctx: Ctx, cluster: str) -> str | None:
    async with ctx.app.sessions() as db:
        row = await cluster_rows.get(db, cluster)
    return ((row.facts or {}).get("bucket") if row else None) or None


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
