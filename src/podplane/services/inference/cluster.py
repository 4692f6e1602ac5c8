"""What endpoint work reads from a cluster, fresh every time: the Deployments and Services
podplane made for endpoints (found by its ownership labels, never by name alone) and their
pods."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import NotFound
from podplane.domain.inference.render import COMPONENT, COMPONENT_VALUE, NAMESPACE, owned
from podplane.domain.jobs.errors import InsufficientGpus
from podplane.domain.jobs.kinds import MANAGED_BY
from podplane.services.jobs.cluster import group_gpus

Shape = dict[str, Any]
OWNED = {MANAGED_BY: "podplane", COMPONENT: COMPONENT_VALUE}


def is_ours(obj: Shape | None, name: str) -> bool:
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in {**OWNED, **owned(name)}.items())


async def deployments(kube: KubePort) -> list[Shape]:
    return await kube.list("apps/v1", "Deployment", namespace=NAMESPACE, labels=OWNED)


async def services_by_name(kube: KubePort) -> dict[str, Shape]:
    found = await kube.list("v1", "Service", namespace=NAMESPACE, labels=OWNED)
    return {s["metadata"]["name"]: s for s in found}


async def find(kube: KubePort, cluster: str, name: str) -> tuple[Shape, Shape | None]:
    """The endpoint's Deployment and Service; NotFound unless podplane made the Deployment."""
    dep = await kube.get("apps/v1", "Deployment", name, NAMESPACE)
    if not is_ours(dep, name):
        raise NotFound(f"Cluster {cluster!r} has no endpoint {name!r}.",
                       hint="List endpoints with endpoint_list (GET .../endpoints).")
    assert dep is not None
    svc = await kube.get("v1", "Service", name, NAMESPACE)
    return dep, svc if is_ours(svc, name) else None


async def pods_of(kube: KubePort, name: str) -> list[Shape]:
    return await kube.list("v1", "Pod", namespace=NAMESPACE, labels=owned(name))


async def refuse_no_room(kube: KubePort, group: str, tp: int, more: int) -> int:
    """`more` new replicas of `tp` GPUs each must fit the free GPUs of the group's healthy
    nodes, one replica per node's worth (else they would wait Pending); the free GPUs."""
    gpus = await group_gpus(kube, group)
    if gpus.fits(tp) < more:
        raise InsufficientGpus(f"{more} more replica(s) x {tp} GPU(s) requested, "
                               f"{gpus.free} free on the {gpus.healthy_nodes} healthy node(s) "
                               f"of {group!r} ({gpus.fits(tp)} replica(s) fit).",
                               hint="Use fewer replicas, stop other work, or scale the group "
                               "(instance_group_scale).")
    return gpus.free
