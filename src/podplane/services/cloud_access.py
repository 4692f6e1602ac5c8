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
from podplane.services.context import AppState


@dataclass
class Cloud:
    aws: AwsPorts
    kube: KubeConnectorPort

    async def kube_for(self, eks_cluster_name: str) -> KubePort:
        return await self.kube.for_cluster(eks_cluster_name)


def attach_cloud(state: AppState, aws: AwsPorts, kube: KubeConnectorPort) -> Cloud:
    cloud = Cloud(aws, kube)
    state.cloud = cloud
    return cloud


def cloud_of(app: AppState) -> Cloud:
    if app.cloud is None:
        raise RuntimeError("no cloud attached: the composition root attaches it when the app "
                           "starts (bootstrap's lifespan)")
    return app.cloud
