"""How services reach the cloud: the AWS ports and one Kubernetes client per cluster.

Built once (`attach_cloud`, from bootstrap's lifespan); services call `cloud_of(ctx.app)`.
Everything here is typed against ports: nothing knows whether the endpoint is real AWS or the
sandbox, and no adapter is named (the adapters are built by `podplane.cloud.wiring`).
"""

from __future__ import annotations

from dataclasses import dataclass

from podplane.cloud.ports import AwsPorts
from podplane.cloud.ports_kube import KubeConnectorPort, KubePort
from podplane.cloud.wiring import build_cloud
from podplane.services.context import AppState
from podplane.services.observe import observed


@dataclass
class Cloud:
    aws: AwsPorts
    kube: KubeConnectorPort

    async def kube_for(self, eks_cluster_name: str) -> KubePort:
        return await self.kube.for_cluster(eks_cluster_name)


def attach_cloud(state: AppState) -> Cloud:
    aws, kube = build_cloud(state.settings)
    cloud = Cloud(aws, kube)  # the engine's steps poll at their own pace, uncached
    state.cloud = observed(cloud)  # every other reader shares the observation cache
    return cloud


def cloud_of(app: AppState) -> Cloud:
    if app.cloud is None:
        attach_cloud(app)
    assert app.cloud is not None
    return app.cloud
