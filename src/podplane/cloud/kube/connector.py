"""One Kubernetes client per EKS cluster, built from DescribeCluster (endpoint + CA) and an
in-process EKS token. Clients are cached: a cluster is always reached the same way."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from podplane.cloud.kube.client import LightkubeKube
from podplane.cloud.kube.config import EksAccess
from podplane.cloud.ports_aws import EksPort
from podplane.cloud.ports_kube import KubePort, Manifest, Manifests, ProxySocket, WatchEvent
from podplane.domain.errors import CloudError, NotFound


class KubeConnector:
    def __init__(self, eks: EksPort, region: str, sts_endpoint: str | None = None) -> None:
        self.eks = eks
        self.region = region
        self.sts_endpoint = sts_endpoint
        self._clients: dict[str, LightkubeKube] = {}
        self._lock = asyncio.Lock()

    async def for_cluster(self, eks_cluster_name: str) -> KubePort:
        await self.current(eks_cluster_name)  # fails now if the cluster is not reachable
        return ClusterKube(self, eks_cluster_name)

    async def current(self, eks_cluster_name: str) -> LightkubeKube:
        """The client in use for this cluster, made if the last one was forgotten."""
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


class ClusterKube:
    """What a caller holds: each request goes to the cluster's current client, so a reader
    that kept it across a `forget` (new access entry, cluster deletion) is not left with a
    closed one; the forgotten client finishes its requests in flight, then closes."""

    def __init__(self, connector: KubeConnector, eks_cluster_name: str) -> None:
        self._connector, self._name = connector, eks_cluster_name

    async def _client(self) -> LightkubeKube:
        return await self._connector.current(self._name)

    async def apply(self, manifest: Manifest, *, field_manager: str = "podplane",
                    force: bool = False) -> Manifest:
        return await (await self._client()).apply(manifest, field_manager=field_manager,
                                                   force=force)

    async def get(self, api_version: str, kind: str, name: str,
                  namespace: str | None = None) -> Manifest | None:
        return await (await self._client()).get(api_version, kind, name, namespace)

    async def list(self, api_version: str, kind: str, **match: Any) -> list[Manifest]:
        return await (await self._client()).list(api_version, kind, **match)

    async def list_at(self, api_version: str, kind: str, **match: Any
                      ) -> tuple[Manifests, str]:
        return await (await self._client()).list_at(api_version, kind, **match)

    async def watch(self, api_version: str, kind: str, **match: Any
                    ) -> AsyncIterator[WatchEvent]:
        async for event in (await self._client()).watch(api_version, kind, **match):
            yield event

    async def patch(self, api_version: str, kind: str, name: str, patch: Any,
                    **where: Any) -> Manifest:
        return await (await self._client()).patch(api_version, kind, name, patch, **where)

    async def delete(self, api_version: str, kind: str, name: str, **how: Any) -> None:
        await (await self._client()).delete(api_version, kind, name, **how)

    async def logs(self, pod: str, namespace: str, **which: Any) -> AsyncIterator[str]:
        async for line in (await self._client()).logs(pod, namespace, **which):
            yield line

    async def proxy(self, method: str, namespace: str, service: str, port: int, path: str,
                    body: Manifest | None = None, **which: Any) -> tuple[int, Any]:
        return await (await self._client()).proxy(method, namespace, service, port, path, body,
                                                   **which)

    async def proxy_raw(self, method: str, namespace: str, service: str, port: int, path: str,
                        headers: dict[str, str], body: bytes
                        ) -> tuple[int, dict[str, str], bytes]:
        return await (await self._client()).proxy_raw(method, namespace, service, port, path,
                                                      headers, body)

    @contextlib.asynccontextmanager
    async def proxy_socket(self, namespace: str, service: str, port: int, path: str,
                           subprotocols: Sequence[str]) -> AsyncIterator[ProxySocket]:
        async with (await self._client()).proxy_socket(namespace, service, port, path,
                                                       subprotocols) as socket:
            yield socket

    async def close(self) -> None:
        await self._connector.forget(self._name)
