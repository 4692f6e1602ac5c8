"""What endpoint work reads from a cluster, fresh every time: the Deployments and Services
podplane made for endpoints (found by its ownership labels, never by name alone) and their
pods."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import NotFound
from podplane.domain.inference.render import COMPONENT, COMPONENT_VALUE, NAMESPACE, owned
from podplane.domain.jobs.errors import InsufficientGpus
from podplane.domain.jobs.kinds import GROUP_LABEL, MANAGED_BY
from podplane.services.scope import labelled_gpus

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
    return await refuse_no_room_on(kube, {GROUP_LABEL: group}, repr(group), tp, more)


async def refuse_no_room_on(kube: KubePort, labels: dict[str, str], where: str, tp: int,
                            more: int) -> int:
    """As refuse_no_room, on the nodes with these labels (`where` names them)."""
    gpus = await labelled_gpus(kube, labels)
    if gpus.fits(tp) < more:
        raise InsufficientGpus(f"{more} more replica(s) x {tp} GPU(s) requested, "
                               f"{gpus.free} free on the {gpus.healthy_nodes} healthy node(s) "
                               f"of {where} ({gpus.fits(tp)} replica(s) fit).",
                               hint="Use fewer replicas, stop other work, or scale the group "
                               "(instance_group_scale).")
    return gpus.free


async def room_warning(kube: KubePort, group: str, tp: int, more: int) -> list[str]:
    """Why `more` replicas above those running would not fit the group now (none: they
    would). An autoscaler's maximum is warned about, not refused: it is reached under load
    later, if ever, when GPUs may be free or the group larger (docs/inference.md)."""
    gpus = await labelled_gpus(kube, {GROUP_LABEL: group})
    if more <= 0 or gpus.fits(tp) >= more:
        return []
    return [f"autoscaling.max_replicas needs {more} more replica(s) x {tp} GPU(s), but "
            f"{gpus.free} GPU(s) are free on {group!r} now ({gpus.fits(tp)} replica(s) fit): "
            "replicas above that stay Pending until GPUs are freed or the group grows."]
