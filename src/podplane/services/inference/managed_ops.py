"""Reads and plans for managed endpoints (services/inference/managed.py finds the objects):
the list and view, scale (the config's `spec.replicas`, which the operator copies to its
Deployment; the config has the scale subresource on that path, ../shared/crds/
hyperpod-inference), and the pod wait that ends a managed scale."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
from podplane.domain.inference import managed_views
from podplane.domain.inference.managed import API_VERSION
from podplane.domain.inference.views import pod_ready
from podplane.ops.context import StepContext
from podplane.services.inference import managed

Shape = dict[str, Any]
POLL_SECONDS = 10.0
READY_SECONDS = 1800.0


async def summaries(kube: KubePort) -> list[Shape]:
    return [managed_views.summary(c, await managed.deployment_of(kube, c))
            for c in await managed.configs(kube)]


async def view(kube: KubePort, name: str) -> Shape | None:
    """The managed endpoint `name`, or None when `name` is not one."""
    config = await managed.config_of(kube, name)
    if config is None:
        return None
    dep = await managed.deployment_of(kube, config)
    svc = await kube.get("v1", "Service", dep["metadata"]["name"], managed.NAMESPACE) \
        if dep else None
    ingress = await kube.get("networking.k8s.io/v1", "Ingress", f"alb-{name}",
                             managed.NAMESPACE)
    lb = (((ingress or {}).get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return managed_views.endpoint_view(config, dep, svc, await managed.pods_of(kube, name),
                                       lb[0].get("hostname") if lb else None)


async def scale(kube: KubePort, name: str, wanted: int) -> None:
    config = await managed.config_of(kube, name)
    if config is None:
        raise NotFound(f"Managed endpoint {name!r} is gone.")
    await kube.patch(API_VERSION, str(config["kind"]), name,
                     {"spec": {"replicas": wanted}}, namespace=managed.NAMESPACE)


async def settled(ctx: StepContext, kube: KubePort, name: str, wanted: int) -> Shape:
    """Until exactly `wanted` pods of the operator's Deployment are Ready and none is left
    terminating (as a self-managed scale waits)."""
    waited = 0.0
    while True:
        pods = await managed.pods_of(kube, name)
        ready = [p for p in pods if pod_ready(p)]
        leaving = [p for p in pods if p["metadata"].get("deletionTimestamp")]
        if len(ready) == wanted and not leaving:
            return {"ready_replicas": len(ready)}
        if waited >= READY_SECONDS:
            raise CloudError(f"Managed endpoint {name}: {len(ready)} of {wanted} replicas "
                             f"Ready after {int(READY_SECONDS)} s.", code="endpoint_not_ready",
                             retryable=False, hint="Read endpoint_get for each pod and the "
                             "operator's message; free GPUs, then retry this step.")
        await ctx.sleep(POLL_SECONDS)
        waited += POLL_SECONDS
