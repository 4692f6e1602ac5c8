"""Building the cloud adapters from settings: the one place outside `cloud.aws`/`cloud.kube`
that names them. The composition root calls it; services only ever see the ports it returns."""

from __future__ import annotations

import os

from podplane.cloud.aws.wiring import build_aws
from podplane.cloud.kube.connector import KubeConnector
from podplane.cloud.ports import AwsPorts
from podplane.cloud.ports_kube import KubeConnectorPort
from podplane.settings import Settings


def build_cloud(settings: Settings) -> tuple[AwsPorts, KubeConnectorPort]:
    """The AWS ports and the per-cluster Kubernetes connector, on the same endpoint (the
    EKS token's STS request goes where the other calls go: AWS or the sandbox)."""
    endpoint = settings.aws_endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
    aws = build_aws(settings.region, endpoint, boundary=settings.role_permissions_boundary)
    return aws, KubeConnector(aws.eks, settings.region, sts_endpoint=endpoint)
