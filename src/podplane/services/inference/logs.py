"""An endpoint's logs: the engine pods of whichever kind serves it (podplane's Deployment, the
inference operator's Deployment, or the warm pool's pods assigned to it) and its router's pods,
bounded and paged as a job's logs are (services/pod_logs.py). The pods' containers write to
stdout, read through the API server's pod log subresource (Kubernetes API reference, "Read log
of the specified Pod"), so this works on a cluster podplane did not create."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.effects import Effect
from podplane.domain.inference import pool_views as pv
from podplane.services import pod_logs
from podplane.services.context import Ctx
from podplane.services.inference import cluster as ic
from podplane.services.inference import managed, pool
from podplane.services.inference import router as rsvc
from podplane.services.registry import service
from podplane.services.scope import kube_of


async def engine_pods(kube: KubePort, cluster: str, name: str) -> list[dict[str, Any]]:
    """The pods serving `name`, whichever kind it is; 404 when there is no such endpoint."""
    if await managed.config_of(kube, name) is not None:
        return await managed.pods_of(kube, name)
    if (svc := await pool.endpoint_service(kube, name)) is not None:
        return pv.serving(svc, await pool.pods_of(kube, pv.pool_of(svc) or ""))
    await ic.find(kube, cluster, name)   # raises the endpoint's 404
    return await ic.pods_of(kube, name)


@service(Effect.READ, "endpoint.logs")
async def endpoint_logs(ctx: Ctx, cluster: str, name: str, pod: str | None = None,
                        container: str | None = None, since_seconds: int | None = None,
                        tail: int | None = None, cursor: int = 0,
                        limit: int = pod_logs.PAGE) -> dict[str, Any]:
    pod_logs.check_bounds(since_seconds, tail)
    _, kube = await kube_of(ctx, cluster)
    pods = await engine_pods(kube, cluster, name) + await rsvc.pods(kube, name)
    names = sorted({p["metadata"]["name"] for p in pods})
    return {"endpoint": name, **await pod_logs.page(
        kube, f"Endpoint {name!r}", names, pod, container, since_seconds, tail, cursor, limit)}
