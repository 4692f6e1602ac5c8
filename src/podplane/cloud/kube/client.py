"""The Kubernetes port over lightkube's async client (see docs/adr/0002-kubernetes-client.md)."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from typing import Any, TypeVar

import httpx2
from lightkube import ApiError, AsyncClient, KubeConfig
from lightkube.config.models import Cluster, User
from lightkube.core.exceptions import LoadResourceError
from lightkube.core.resource import NamespacedResource
from lightkube.core.resource_registry import resource_registry
from lightkube.generic_resource import (
    async_load_in_cluster_generic_resources,
    create_global_resource,
    create_namespaced_resource,
)
from lightkube.resources import core_v1
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.types import CascadeType, PatchType

from podplane.cloud.kube import sockets
from podplane.cloud.kube.config import EksAccess
from podplane.cloud.ports_kube import (
    Manifest,
    Manifests,
    PatchKind,
    Propagation,
    ProxySocket,
    WatchEvent,
)
from podplane.domain.errors import CloudError, Conflict, InvalidInput, NotFound, PodplaneError

PATCH_TYPES = {
    "merge": PatchType.MERGE,
    "strategic": PatchType.STRATEGIC,
    "json": PatchType.JSON,
    "apply": PatchType.APPLY,
}
CASCADE = {
    "Background": CascadeType.BACKGROUND,
    "Foreground": CascadeType.FOREGROUND,
    "Orphan": CascadeType.ORPHAN,
}


T = TypeVar("T")
# A pooled keep-alive connection the server closed while idle fails the next request with one
# of these before any byte of a response arrived; the request can be sent again on a new
# connection (Go's net/http Transport retries such requests the same way).
STALE_CONNECTION = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)


def _unreachable(exc: httpx2.TransportError) -> CloudError:
    return CloudError(
        f"The cluster's Kubernetes API did not answer: {type(exc).__name__}: {exc}",
        code="kube_unreachable", retryable=True, http_status=503,
        hint="The EKS endpoint may be starting, being deleted, or not reachable from where "
             "podplane runs (private endpoint access, security groups); try again shortly.")


async def _call(request: Callable[[], Awaitable[T]], *, idempotent: bool = True) -> T:
    """One Kubernetes request with its errors classified; an idempotent one is sent once more
    if its connection turned out to be stale."""
    for attempt in (1, 2):
        try:
            return await request()
        except ApiError as exc:
            raise _error(exc) from exc
        except STALE_CONNECTION as exc:
            if attempt == 2 or not idempotent:
                raise _unreachable(exc) from exc
        except httpx2.TransportError as exc:
            raise _unreachable(exc) from exc
    raise AssertionError("unreachable")


def _as_dict(obj: Any) -> Manifest:
    return obj.to_dict() if hasattr(obj, "to_dict") else dict(obj)


def _error(exc: ApiError) -> PodplaneError:
    status = exc.status
    message = status.message or "Kubernetes API error"
    if status.code == 404:
        return NotFound(message)
    if status.code == 409:
        return Conflict(message, reason=status.reason)
    if status.code in (401, 403):
        return _access_error(status.code, message)
    if status.code == 422:
        causes = [
            {"field": c.field, "message": c.message}
            for c in ((status.details.causes or []) if status.details else [])
        ]
        return InvalidInput(message, causes=causes)
    return CloudError(
        message,
        code="kubernetes_api_error",
        retryable=(status.code or 500) >= 500 or status.code == 429,
        http_status=status.code,
    )


def _access_error(code: int, message: str) -> CloudError:
    """EKS answers 401 when the token's IAM principal has no access entry on the cluster, and
    403 when its access policies do not allow the request (EKS user guide, access entries)."""
    if code == 401:
        return CloudError(
            f"Kubernetes refused podplane's identity: {message}", code="kube_unauthorized",
            http_status=401,
            hint="Create an EKS access entry for the IAM principal podplane runs as (`aws sts "
                 "get-caller-identity`; for an assumed role use the role's ARN) with "
                 "AmazonEKSClusterAdminPolicy at cluster scope, e.g. `aws eks "
                 "create-access-entry` then `aws eks associate-access-policy`.")
    return CloudError(
        message, code="kube_forbidden", http_status=403,
        hint="podplane's EKS access entry lacks a policy for this request; associate "
             "AmazonEKSClusterAdminPolicy at cluster scope.")


class LightkubeKube:
    """KubePort adapter. One instance per cluster; the bearer token is refreshed per request."""

    def __init__(self, access: EksAccess, namespace: str = "default") -> None:
        self.access = access
        cluster = Cluster(
            server=access.endpoint, certificate_auth_data=base64.b64encode(access.ca_pem).decode()
        )
        config = KubeConfig.from_one(
            cluster=cluster, user=User(token=access.token()), namespace=namespace
        )
        self._client = AsyncClient(config=config, field_manager="podplane")
        self._crds_loaded = False
        self._inflight, self._retired = 0, False
        # lightkube fixes the token at construction; EKS tokens expire, so sign per request
        self._client._client._client.auth = _EksAuth(access)

    async def _resource(self, api_version: str, kind: str) -> Any:
        res = _builtin(api_version, kind)
        if res is None and not self._crds_loaded:
            await self._call(lambda: async_load_in_cluster_generic_resources(self._client))
            self._crds_loaded = True
            res = resource_registry.get(api_version, kind)
        if res is None:
            await self._call(lambda: self._discover(api_version, kind))
            res = resource_registry.get(api_version, kind)
        if res is None:
            raise NotFound(f"the server has no resource of kind {kind} in {api_version}")
        return res

    async def _discover(self, api_version: str, kind: str) -> None:
        group, _, version = api_version.rpartition("/")
        async for crd in self._client.list(CustomResourceDefinition):
            spec = crd.spec
            if spec.group == group and spec.names.kind == kind:
                make = (
                    create_namespaced_resource
                    if spec.scope == "Namespaced"
                    else create_global_resource
                )
                make(group, version, kind, spec.names.plural)

    async def apply(
        self, manifest: Manifest, *, field_manager: str = "podplane", force: bool = False
    ) -> Manifest:
        res = await self._resource(manifest["apiVersion"], manifest["kind"])
        meta = manifest.get("metadata") or {}
        out = await self._call(lambda: self._client.patch(
            res,
            meta["name"],
            manifest,
            namespace=meta.get("namespace"),
            patch_type=PatchType.APPLY,
            field_manager=field_manager,
            force=force,
        ))  # server-side apply states the whole intent: sending it twice is harmless
        return _as_dict(out)

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Manifest | None:
        res = await self._resource(api_version, kind)
        try:
            found = await self._call(lambda: self._client.get(res, name, namespace=namespace))
            return _as_dict(found)
        except NotFound:
            return None

    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
        fields: dict[str, str] | None = None,
    ) -> list[Manifest]:
        res = await self._resource(api_version, kind)

        async def pages() -> list[Manifest]:
            return [
                _as_dict(o)
                async for o in self._client.list(
                    res,
                    namespace=namespace or "*" if _namespaced(res) else None,
                    labels=_selector(labels),
                    fields=_selector(fields),
                    chunk_size=500,
                )
            ]

        return await self._call(pages)

    async def list_at(
        self, api_version: str, kind: str, *, labels: dict[str, str] | None = None
    ) -> tuple[Manifests, str]:
        res = await self._resource(api_version, kind)

        async def pages() -> tuple[Manifests, str]:
            listed = self._client.list(res, namespace="*" if _namespaced(res) else None,
                                       labels=_selector(labels), chunk_size=500)
            found = [_as_dict(o) async for o in listed]
            return found, listed.resourceVersion

        return await self._call(pages)

    async def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
        resource_version: str | None = None,
    ) -> AsyncIterator[WatchEvent]:
        res = await self._resource(api_version, kind)
        try:
            async for kind_, obj in self._client.watch(
                res,
                namespace=namespace or "*" if _namespaced(res) else None,
                labels=_selector(labels),
                resource_version=resource_version,
            ):
                yield WatchEvent(kind_, _as_dict(obj))
        except ApiError as exc:
            raise _error(exc) from exc
        except httpx2.TransportError as exc:  # a stream is not resent: its caller resumes it
            raise _unreachable(exc) from exc

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
    ) -> Manifest:
        res = await self._resource(api_version, kind)
        if subresource == "status":
            res = res.Status
        elif subresource == "scale":
            res = res.Scale
        out = await self._call(lambda: self._client.patch(
            res, name, patch, namespace=namespace, patch_type=PATCH_TYPES[patch_kind]),
            idempotent=patch_kind != "json")  # a JSON patch may add to a list each time
        return _as_dict(out)

    async def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        propagation: Propagation = "Background",
    ) -> None:
        res = await self._resource(api_version, kind)
        with contextlib.suppress(NotFound):  # gone already (or by our first attempt)
            await self._call(lambda: self._client.delete(res, name, namespace=namespace,
                                                    cascade=CASCADE[propagation]))

    async def logs(
        self,
        pod: str,
        namespace: str,
        *,
        container: str | None = None,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
        previous: bool = False,
    ) -> AsyncIterator[str]:
        try:
            if previous:
                async for line in self._previous_log(pod, namespace, container, tail_lines,
                                                     timestamps):
                    yield line
                return
            async for line in self._client.log(
                pod,
                namespace=namespace,
                container=container,
                follow=follow,
                tail_lines=tail_lines,
                since=since_seconds,
                timestamps=timestamps,
                newlines=False,
            ):
                yield line
        except ApiError as exc:
            raise _error(exc) from exc
        except httpx2.TransportError as exc:
            raise _unreachable(exc) from exc

    async def _previous_log(self, pod: str, namespace: str, container: str | None,
                            tail_lines: int | None, timestamps: bool) -> AsyncIterator[str]:
        """The previous run's log (`previous=true`, Kubernetes PodLogOptions): lightkube's
        `log()` has no such parameter, so the same request is built with it."""
        generic = self._client._client
        request = generic.prepare_request(
            "get", core_v1.PodLog, name=pod, namespace=namespace,
            params={"previous": True, "tailLines": tail_lines, "container": container,
                    "timestamps": timestamps})
        resp = await generic.send(generic.build_adapter_request(request))  # type: ignore[no-untyped-call]
        generic.raise_for_status(resp)  # type: ignore[no-untyped-call]
        async for line in resp.aiter_lines():
            yield line

    async def proxy(
        self, method: str, namespace: str, service: str, port: int, path: str,
        body: Manifest | None = None, *, resource: str = "services",
    ) -> tuple[int, Any]:
        # Kubernetes docs, "Manually constructing apiserver proxy URLs" (Access Services
        # Running on Clusters): /api/v1/namespaces/NS/services/NAME:PORT/proxy/PATH (or pods).
        url = f"/api/v1/namespaces/{namespace}/{resource}/{service}:{port}/proxy/{path}"
        http = self._client._client._client  # lightkube's httpx client: base URL, TLS, auth

        async def send() -> httpx2.Response:
            return await http.request(method, url, json=body, timeout=60.0)

        answer = await self._call(send, idempotent=method == "GET")
        try:
            return answer.status_code, answer.json()
        except ValueError:
            return answer.status_code, answer.text

    async def proxy_raw(
        self, method: str, namespace: str, service: str, port: int, path: str,
        headers: dict[str, str], body: bytes,
    ) -> tuple[int, dict[str, str], bytes]:
        """As `proxy`, bytes in and out (a browser's request to an application)."""
        url = f"/api/v1/namespaces/{namespace}/services/{service}:{port}/proxy/{path}"
        http = self._client._client._client

        async def send() -> httpx2.Response:
            return await http.request(method, url, headers=headers, content=body or None,
                                      timeout=60.0)

        answer = await self._call(send, idempotent=method == "GET")
        return answer.status_code, dict(answer.headers), answer.content

    @contextlib.asynccontextmanager
    async def proxy_socket(self, namespace: str, service: str, port: int, path: str,
                           subprotocols: Sequence[str]) -> AsyncIterator[ProxySocket]:
        async with sockets.proxy_socket(self.access, namespace, service, port, path,
                                        subprotocols) as socket:
            yield socket

    async def _call(self, request: Callable[[], Awaitable[T]], *, idempotent: bool = True) -> T:
        """A request counted in flight, so that a retired client closes only after it."""
        if self._retired and self._inflight == 0:
            raise CloudError("This cluster's Kubernetes client was retired (its access changed "
                             "or the cluster is being deleted).", code="kube_unreachable",
                             retryable=True, http_status=503,
                             hint="Read again: a new request gets a new client.")
        self._inflight += 1
        try:
            return await _call(request, idempotent=idempotent)
        finally:
            self._inflight -= 1
            if self._retired and self._inflight == 0:
                await self._client.close()

    async def close(self) -> None:
        """Retire the client: requests already sent finish first (a reader may hold it while
        the cluster's access entry is renewed or its deletion forgets it)."""
        self._retired = True
        if self._inflight == 0:
            await self._client.close()


def _selector(match: dict[str, str] | None) -> dict[str, Any] | None:
    return dict(match) if match else None


def _builtin(api_version: str, kind: str) -> Any:
    try:
        return resource_registry.load(api_version, kind)
    except LoadResourceError:
        return None


def _namespaced(res: Any) -> bool:
    return isinstance(res, type) and issubclass(res, NamespacedResource)


class _EksAuth(httpx2.Auth):
    def __init__(self, access: EksAccess) -> None:
        self.access = access

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, Any, None]:
        request.headers["Authorization"] = f"Bearer {self.access.token()}"
        yield request
