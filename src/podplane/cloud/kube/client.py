"""The Kubernetes port over lightkube's async client (see docs/adr/0002-kubernetes-client.md)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Generator
from typing import Any

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
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.types import CascadeType, PatchType

from podplane.cloud.kube.config import EksAccess
from podplane.cloud.ports_kube import Manifest, PatchKind, Propagation, WatchEvent
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
        # lightkube fixes the token at construction; EKS tokens expire, so sign per request
        self._client._client._client.auth = _EksAuth(access)

    async def _resource(self, api_version: str, kind: str) -> Any:
        res = _builtin(api_version, kind)
        if res is None and not self._crds_loaded:
            await async_load_in_cluster_generic_resources(self._client)
            self._crds_loaded = True
            res = resource_registry.get(api_version, kind)
        if res is None:
            await self._discover(api_version, kind)
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
        try:
            out = await self._client.patch(
                res,
                meta["name"],
                manifest,
                namespace=meta.get("namespace"),
                patch_type=PatchType.APPLY,
                field_manager=field_manager,
                force=force,
            )
        except ApiError as exc:
            raise _error(exc) from exc
        return _as_dict(out)

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Manifest | None:
        res = await self._resource(api_version, kind)
        try:
            return _as_dict(await self._client.get(res, name, namespace=namespace))
        except ApiError as exc:
            if exc.status.code == 404:
                return None
            raise _error(exc) from exc

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
        try:
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
        except ApiError as exc:
            raise _error(exc) from exc

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
        try:
            out = await self._client.patch(
                res, name, patch, namespace=namespace, patch_type=PATCH_TYPES[patch_kind]
            )
        except ApiError as exc:
            raise _error(exc) from exc
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
        try:
            await self._client.delete(res, name, namespace=namespace, cascade=CASCADE[propagation])
        except ApiError as exc:
            if exc.status.code != 404:
                raise _error(exc) from exc

    async def logs(
        self,
        pod: str,
        namespace: str,
        *,
        container: str | None = None,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
    ) -> AsyncIterator[str]:
        try:
            async for line in self._client.log(
                pod,
                namespace=namespace,
                container=container,
                follow=follow,
                tail_lines=tail_lines,
                since=since_seconds,
                newlines=False,
            ):
                yield line
        except ApiError as exc:
            raise _error(exc) from exc

    async def close(self) -> None:
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
