"""The API server's front door: authenticate the EKS token, then authorize the request.

401 when the token is invalid, expired, made for another cluster, or its principal has no
access entry on this cluster (EKS answers 401 in both cases; kubectl then prints "the server
has asked for the client to provide credentials"). 403 when the entry's access policies and
Kubernetes groups do not allow the verb on the resource, worded as kube-apiserver's RBAC
authorizer words it; a Service proxy request is authorized as `services/proxy` (no
discovery-style pass). Health and version are open, discovery is open to any authenticated
principal (Kubernetes binds system:discovery to system:authenticated). The sandbox's own
controllers write to the store directly and never pass here.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from starlette.responses import Response
from starlette.websockets import WebSocket

from podplane_sandbox.contracts import (
    SANDBOX_ADMIN_ARN,
    SANDBOX_KEY,
    SANDBOX_SECRET,
    AccessGrant,
    AccessSource,
    Signer,
)
from podplane_sandbox.kube import auth, authz, requester
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.paths import parse
from podplane_sandbox.kube.store import Store

log = logging.getLogger(__name__)
OPEN_PATHS = {"/healthz", "/livez", "/readyz", "/version", "/version/"}
CACHE_SECONDS = 30.0  # a verified token is re-verified at most this often
UNAUTHORIZED = KubeError(401, "Unauthorized", "Unauthorized")


class Gate:
    def __init__(self, app: Any, store: Store, cluster: str, access: AccessSource,
                 own_hosts: frozenset[str]) -> None:
        self.app, self.store, self.cluster = app, store, cluster
        self.access, self.own_hosts = access, own_hosts
        self._verified: dict[str, tuple[Signer, float]] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # A WebSocket's handshake is a GET with Upgrade: authenticated and authorized like one
        # (kube-apiserver runs its filters before the upgrade-aware proxy handler takes over:
        # k8s.io/apiserver pkg/server/config.go DefaultBuildHandlerChain).
        if scope["type"] in ("http", "websocket") and scope["path"] not in OPEN_PATHS:
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            try:
                self.check(headers.get("authorization"), scope)
            except KubeError as err:
                await refuse(err, scope, receive, send)
                return
        await self.app(scope, receive, send)

    def check(self, authorization: str | None, scope: dict[str, Any]) -> None:
        grant = self.authenticate(authorization)
        requester.USER.set(grant.username)
        req = self.request_of(scope)
        if req is not None and not authz.allowed(grant, req, self.store):
            raise forbidden(grant.username, req, _name_of(scope["path"], req))

    def authenticate(self, authorization: str | None) -> AccessGrant:
        token = auth.bearer(authorization)
        if token is None:
            raise UNAUTHORIZED
        signer = self._signer(token)
        grant = self.access.grant(self.cluster, signer.principal_arn)
        if grant is None:
            log.info("401 for %s on %s: no access entry", signer.principal_arn, self.cluster)
            raise UNAUTHORIZED
        return grant

    def _signer(self, token: str) -> Signer:
        now = time.time()
        cached = self._verified.get(token)
        if cached and cached[1] > now:
            return cached[0]
        try:
            signer = auth.verify(token, self.cluster, self.access.signer, now, self.own_hosts)
        except auth.TokenRejected as why:
            log.info("401 on %s: %s", self.cluster, why)
            raise UNAUTHORIZED from None
        if len(self._verified) > 256:
            self._verified.clear()
        self._verified[token] = (signer, now + CACHE_SECONDS)
        return signer

    def request_of(self, scope: dict[str, Any]) -> authz.Request | None:
        """The resource request, or None for discovery and other non-resource paths."""
        path = scope["path"].rstrip("/")
        parts = [p for p in path.split("/") if p]
        proxied = _service_proxy(parts)
        if proxied:
            return authz.Request(_verb(scope.get("method", "GET"), True, {}), "",
                                 f"{parts[4]}/proxy",
                                 proxied, True)
        if not (parts[:2] == ["api", "v1"] and len(parts) > 2) and \
                not (parts[:1] == ["apis"] and len(parts) > 3):
            return None
        try:
            t = parse(self.store.registry, path)
        except KubeError:
            return None  # the app answers 404
        query = parse_qs(scope.get("query_string", b"").decode())
        resource = f"{t.rt.plural}/{t.sub}" if t.sub else t.rt.plural
        return authz.Request(_verb(scope.get("method", "GET"), bool(t.name), query),
                             t.rt.group, resource,
                             t.namespace, t.rt.namespaced)


async def refuse(err: KubeError, scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The API server's Status for a refused request; for a WebSocket handshake, as the HTTP
    answer to it (the ASGI websocket.http.response extension), as kube-apiserver answers an
    upgrade it refuses."""
    answer = Response(json.dumps(err.status()).encode(), err.code,
                      media_type="application/json")
    if scope["type"] == "websocket":
        await WebSocket(scope, receive, send).send_denial_response(answer)
    else:
        await answer(scope, receive, send)


def _service_proxy(parts: list[str]) -> str:
    """The namespace of a `services|pods/{name}/proxy[/...]` request, else "". kube-apiserver
    authorizes it as the `proxy` subresource of `services` (or `pods`), named, whatever path
    follows, with the verb of its HTTP method (GET get, POST create, PUT update, PATCH patch,
    DELETE delete):
    kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go
    (NewRequestInfo) and the Kubernetes docs "Authorization" ("Determine the Request Verb") and
    "Using RBAC Authorization" ("Referring to resources": subresources as `pods/log`)."""
    if len(parts) >= 7 and parts[:3] == ["api", "v1", "namespaces"] and \
            parts[4] in ("services", "pods") and parts[6] == "proxy":
        return parts[3]
    return ""


def _verb(method: str, named: bool, query: dict[str, list[str]]) -> str:
    if method == "GET":
        if named:
            return "get"
        return "watch" if query.get("watch", [""])[0] in ("true", "1", "True") else "list"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def _name_of(path: str, req: authz.Request) -> str:
    parts = [p for p in path.split("/") if p]
    base = req.resource.partition("/")[0]
    idx = parts.index(base) if base in parts else -1
    return parts[idx + 1] if 0 <= idx < len(parts) - 1 else ""


def forbidden(user: str, req: authz.Request, name: str) -> KubeError:
    # The leading resource is the group-resource without its subresource (apiserver
    # endpoints/handlers/responsewriters forbiddenMessage + errors.NewForbidden); the verb's
    # resource names it: `pods "x" is forbidden: ... cannot get resource "pods/log"`.
    base = req.resource.partition("/")[0]
    what = f'{base} "{name}"' if name else base
    where = (f'in the namespace "{req.namespace}"' if req.namespace
             else "at the cluster scope")
    message = (f'{what} is forbidden: User "{user}" cannot {req.verb} resource '
               f'"{req.resource}" in API group "{req.group}" {where}')
    return KubeError(403, message, "Forbidden",
                     {"name": name, "kind": req.resource.partition("/")[0]}
                     if name else {"kind": req.resource.partition("/")[0]})


class StandaloneAccess:
    """The emulator without the AWS side (its own tests): the sandbox's default key only,
    as a cluster admin on any cluster."""

    def signer(self, access_key: str) -> Signer | None:
        if access_key != SANDBOX_KEY:
            return None
        return Signer(SANDBOX_ADMIN_ARN, SANDBOX_ADMIN_ARN, SANDBOX_SECRET)

    def grant(self, eks_cluster_name: str, principal_arn: str) -> AccessGrant | None:
        if principal_arn != SANDBOX_ADMIN_ARN:
            return None
        return AccessGrant(principal_arn, policies=(("AmazonEKSClusterAdminPolicy", "cluster",
                                                     ()),))
