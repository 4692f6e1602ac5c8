"""A space's server logs, bounded and paged as a job's are (services/pod_logs.py)."""

from __future__ import annotations

from typing import Any

from podplane.domain.effects import Effect
from podplane.services import pod_logs
from podplane.services.context import Ctx
from podplane.services.registry import service
from podplane.services.scope import kube_of
from podplane.services.spaces import cluster as sc


@service(Effect.READ, "space.logs")
async def space_logs(ctx: Ctx, cluster: str, name: str, pod: str | None = None,
                     container: str | None = None, since_seconds: int | None = None,
                     tail: int | None = None, cursor: int = 0,
                     limit: int = pod_logs.PAGE) -> dict[str, Any]:
    pod_logs.check_bounds(since_seconds, tail)
    _, kube = await kube_of(ctx, cluster)
    await sc.find(kube, cluster, name)
    names = sorted(p["metadata"]["name"] for p in await sc.pods_of(kube, name))
    return {"space": name, **await pod_logs.page(
        kube, f"Space {name!r}", names, pod, container, since_seconds, tail, cursor, limit)}
