"""The Kubernetes port: what podplane needs from a cluster's API, in plain manifests.

Adapters: cloud/kube (lightkube, real EKS or the sandbox). Errors are domain errors:
NotFound, Conflict, InvalidInput (with the API's field causes), CloudError otherwise.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, NamedTuple, Protocol

Manifest = dict[str, Any]
Manifests = list[Manifest]  # (a name that a method called `list` cannot shadow)
PatchKind = Literal["merge", "strategic", "json", "apply"]
Propagation = Literal["Background", "Foreground", "Orphan"]


class WatchEvent(NamedTuple):
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK
    object: Manifest


class KubePort(Protocol):
    async def apply(
        self, manifest: Manifest, *, field_manager: str = "podplane", force: bool = False
    ) -> Manifest: ...

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Manifest | None: ...

    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
        fields: dict[str, str] | None = None,
    ) -> list[Manifest]: ...

    async def list_at(
        self, api_version: str, kind: str, *, labels: dict[str, str] | None = None
    ) -> tuple[Manifests, str]:
        """A whole-cluster list and the resourceVersion it was read at (to watch from)."""
        ...

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
        resource_version: str | None = None,
    ) -> AsyncIterator[WatchEvent]: ...

    async def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_kind: PatchKind = "merge",
        subresource: str | None = None,
    ) -> Manifest: ...

    async def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        propagation: Propagation = "Background",
    ) -> None: ...

    def logs(
        self,
        pod: str,
        namespace: str,
        *,
        container: str | None = None,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
        previous: bool = False,  # PodLogOptions.previous: the last terminated run
    ) -> AsyncIterator[str]: ...

    async def proxy(
        self, method: str, namespace: str, service: str, port: int, path: str,
        body: Manifest | None = None, *, resource: Literal["services", "pods"] = "services",
    ) -> tuple[int, Any]:
        """One HTTP request to a Service through the API server's proxy subresource
        (`/api/v1/namespaces/{ns}/services/{name}:{port}/proxy/{path}`): (status, JSON or
        text). The API server answers 503 itself when the Service has no ready endpoint.
        `resource="pods"`: to one pod by name (`pods/{name}:{port}/proxy`)."""
        ...

    async def proxy_raw(
        self, method: str, namespace: str, service: str, port: int, path: str,
        headers: dict[str, str], body: bytes,
    ) -> tuple[int, dict[str, str], bytes]:
        """As `proxy`, bytes in and out: (status, headers, body). `path` may carry a query."""
        ...

    def proxy_socket(
        self, namespace: str, service: str, port: int, path: str, subprotocols: Sequence[str],
    ) -> AbstractAsyncContextManager[ProxySocket]:
        """A WebSocket to a Service through the same proxy (the API server's proxy is
        upgrade-aware), offering `subprotocols`. A refused handshake raises PodplaneError
        with the status the API server or the application answered."""
        ...

    async def close(self) -> None: ...


class ProxySocket(Protocol):
    """One open WebSocket to an application in the cluster."""

    subprotocol: str | None   # what the application chose of those offered

    async def send(self, message: str | bytes) -> None: ...

    def messages(self) -> AsyncIterator[str | bytes]:
        """What the application sends, until it closes the socket."""
        ...


class KubeConnectorPort(Protocol):
    """One Kubernetes client per EKS cluster, made on first use and kept."""

    async def for_cluster(self, eks_cluster_name: str) -> KubePort: ...
    async def forget(self, eks_cluster_name: str) -> None: ...
    async def close(self) -> None: ...
