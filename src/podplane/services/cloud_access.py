"""How services reach the cloud: the AWS ports and one Kubernetes client per cluster.

Built once by bootstrap (`attach_cloud`); services call `cloud_of(ctx.app)`. Nothing here
knows whether the endpoint is real AWS or the sandbox.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from podplane.cloud.aws import AwsAdapters, build_aws
from podplane.cloud.kube.connector import KubeConnector
from podplane.cloud.ports_kube import KubePort
from podplane.services.context import AppState


@dataclass
class Cloud:
    aws: AwsAdapters
    kube: KubeConnector

    async def kube_for(self, eks_cluster_name: str) -> KubePort:
        return await self.kube.for_cluster(eks_cluster_name)


def attach_cloud(state: AppState) -> Cloud:
    settings = state.settings
    endpoint = settings.aws_endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
    aws = build_aws(settings.region, endpoint)
    cloud = Cloud(aws, KubeConnector(aws.eks, settings.region, sts_endpoint=endpoint))
    state.cloud = cloud
    return cloud


def cloud_of(app: AppState) -> Cloud:
    return app.cloud if app.cloud is not None else attach_cloud(app)
