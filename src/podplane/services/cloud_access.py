"""How services reach the cloud: the AWS ports and one Kubernetes client per cluster.

Attached once by the composition root (bootstrap's lifespan builds the adapters with
`podplane.cloud.wiring.build_cloud` and hands them to `attach_cloud`); services call
`cloud_of(ctx.app)`. Everything here is typed against ports: nothing knows whether the endpoint
is real AWS or the sandbox, and no adapter is named or built here.
"""

from __future__ import annotations

from dataclasses import dataclass

from podplane.cloud.ports import AwsPorts
from podplane.cloud.ports_kube import KubeConnectorPort, KubePort
from podplane.ops.engine import OpsEngine
from podplane.services.context import AppState
from podplane.services.observe import cache_of, observed


@dataclass
class Cloud:
    aws: AwsPorts
    kube: KubeConnectorPort

    async def kube_for(self, eks_cluster_name: str) -> KubePort:
        return await self.kube.for_cluster(eks_cluster_name)


def attach_cloud(state: AppState, aws: AwsPorts, kube: KubeConnectorPort) -> Cloud:
    """Readers (status, views) share the observation cache; the engine's steps get the cloud
    itself: a step decides what to create from what it reads, so it must never act on a
    cached answer (exactly once)."""
    cloud = Cloud(aws, kube)
    state.cloud = observed(cloud)
    state.engine_cloud = cloud
    return cloud


def fence_views(state: AppState, engine: OpsEngine) -> None:
    """Read-your-writes (ADR 0013): the engine fences the views' cache before it records a
    step's or an operation's end; with PostgreSQL each view read also learns the database's
    write fence, so another replica's writes fence it too."""
    cache = cache_of(cloud_of(state))
    if cache is None:
        return
    engine.fence_views(cache.fence)
    if engine.shared:
        cache.fence_source = engine.fence_mark


def cloud_of(app: AppState) -> Cloud:
    if app.cloud is None:
        raise RuntimeError("no cloud attached: the composition root attaches it when the app "
                           "starts (bootstrap's lifespan)")
    return app.cloud


def engine_cloud(app: AppState) -> Cloud:
    """The uncached cloud, for workflow steps."""
    if app.engine_cloud is None:
        raise RuntimeError("no cloud attached: the composition root attaches it when the app "
                           "starts (bootstrap's lifespan)")
    return app.engine_cloud
