"""One Kubernetes client per EKS cluster, built from DescribeCluster (endpoint + CA) and an
in-process EKS token. Clients are cached: a cluster is always reached the same way."""

from __future__ import annotations

import asyncio

from podplane.cloud.kube.client import LightkubeKube
from podplane.cloud.kube.config import EksAccess
from podplane.cloud.ports_aws import EksPort
from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound


class KubeConnector:
    def __init__(self, eks: EksPort, region: str, sts_endpoint: str | None = None) -> None:
        self.eks = eks
        self.region = region
        self.sts_endpoint = sts_endpoint
        self._clients: dict[str, LightkubeKube] = {}
        self._lock = asyncio.Lock()

    async def for_cluster(self, eks_cluster_name: str) -> KubePort:
        async with self._lock:
            client = self._clients.get(eks_cluster_name)
            if client is None:
                client = LightkubeKube(await self._access(eks_cluster_name))
                self._clients[eks_cluster_name] = client
            return client

    async def _access(self, name: str) -> EksAccess:
        described = await self.eks.describe_cluster(name)
        if described is None:
            raise NotFound(f"EKS cluster {name!r} does not exist.")
        cluster = described.get("cluster", described)
        if cluster.get("status") != "ACTIVE" or not cluster.get("endpoint"):
            raise CloudError(f"EKS cluster {name!r} is {cluster.get('status')}, not ACTIVE yet.",
                             code="cluster_not_ready", retryable=True)
        return EksAccess.from_describe_cluster(described, self.region,
                                               sts_endpoint=self.sts_endpoint)

    async def forget(self, eks_cluster_name: str) -> None:
        async with self._lock:
            client = self._clients.pop(eks_cluster_name, None)
        if client is not None:
            await client.close()

    async def close(self) -> None:
        for name in list(self._clients):
            await self.forget(name)
