"""Opening a space in the browser: a ticket from the console, a session on the space's own
origin, and each request forwarded to the space's server through the API server's Service
proxy with the server's token added (services/spaces/access.py says why as a parameter).

The space's pages run on their own host (domain/spaces/passes.space_host): their scripts can
neither send the viewer's podplane cookie (host-only, another host) nor read another space.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from podplane.cloud.ports_kube import KubePort, ProxySocket
from podplane.domain.effects import Effect, Role
from podplane.domain.errors import Forbidden, Unauthenticated
from podplane.domain.principal import Principal
from podplane.domain.spaces import passes, render
from podplane.domain.spaces.passes import Pass
from podplane.services.access import auth
from podplane.services.context import AppState, Ctx
from podplane.services.registry import service
from podplane.services.scope import kube_of
from podplane.services.spaces import access
from podplane.store import audit_log

TICKET = "podplane_ticket"
COOKIE = "podplane_space"
# What crosses to the space's server: content negotiation, Jupyter's XSRF header, and the
# cookies the server set on its own origin (never ours).
FORWARDED = ("accept", "content-type", "x-xsrftoken", "x-requested-with")


@dataclass
class Keys:
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    used: dict[str, float] = field(default_factory=dict)   # ticket nonce -> its expiry

    def spend(self, grant: Pass, now: float) -> bool:
        """A ticket is good once."""
        self.used = {n: t for n, t in self.used.items() if t > now}
        if grant.nonce in self.used:
            return False
        self.used[grant.nonce] = grant.expires
        return True


_BY_APP: weakref.WeakKeyDictionary[Any, Keys] = weakref.WeakKeyDictionary()


def keys_of(app: AppState) -> Keys:
    found = _BY_APP.get(app.sessions)
    if found is None:
        found = _BY_APP[app.sessions] = Keys()
    return found


@dataclass(frozen=True)
class Opened:
    url: str
    expires_in: int


def space_origin(app: AppState, cluster: str, name: str) -> str:
    """Where browsers reach the space: the public URL's scheme and port behind a proxy, the
    console's own port locally, PODPLANE_SPACES_PORT over either."""
    s = app.settings
    host = passes.space_host(name, cluster, s.spaces_domain)
    public = urlsplit(s.public_url) if s.public_url else None
    port = s.spaces_port or (public.port if public else s.port)
    return f"{public.scheme if public else 'http'}://{host}" + (f":{port}" if port else "")


# A link that runs code as the space: operator, like reading its files. Audited (who opened
# which space when), whatever the result.
@service(Effect.READ, "space.open", min_role=Role.OPERATOR)
async def open_space(ctx: Ctx, cluster: str, name: str) -> Opened:
    _, kube = await kube_of(ctx, cluster)
    await access.running(kube, cluster, name)
    now = time.time()
    ticket = passes.seal(keys_of(ctx.app).key, Pass(
        "ticket", cluster, name, ctx.principal.token_id, ctx.principal.name,
        secrets.token_urlsafe(12), now + passes.TICKET_SECONDS))
    async with ctx.app.sessions.begin() as db:
        await audit_log.append(db, principal=ctx.principal, action="space.open",
                               target=f"cluster/{cluster}/space/{name}", result="ok")
    path = render.base_path(cluster, name) + "lab"
    return Opened(f"{space_origin(ctx.app, cluster, name)}{path}?{TICKET}={quote(ticket)}",
                  passes.TICKET_SECONDS)


def exchange(app: AppState, ticket: str, cluster: str, name: str) -> str:
    """A valid, unused ticket for this space -> a space session (the cookie's value)."""
    keys, now = keys_of(app), time.time()
    grant = passes.unseal(keys.key, ticket, "ticket", now)
    if grant is None or (grant.cluster, grant.space) != (cluster, name) or \
            not keys.spend(grant, now):
        raise Unauthenticated("This link has expired or was used already.",
                              hint="Open the space again from podplane.")
    return passes.seal(keys.key, Pass("session", cluster, name, grant.token_id, grant.who,
                                      grant.nonce, now + passes.SESSION_SECONDS))


async def session_of(app: AppState, cookie: str | None, cluster: str, name: str) -> Pass:
    """The space session a request carries, while its podplane token stays valid."""
    grant = passes.unseal(keys_of(app).key, cookie or "", "session", time.time())
    if grant is None:
        raise Unauthenticated("Open this space from podplane first.")
    if (grant.cluster, grant.space) != (cluster, name):
        raise Forbidden("This session is for another space.")
    if not await auth.still_valid(app, grant.token_id):
        raise Unauthenticated("The podplane token or session this space was opened with "
                              "has ended.", hint="Sign in and open the space again.")
    return grant


async def session_ended(app: AppState, grant: Pass) -> None:
    """Returns once a socket opened with this session must close: the session expired, or the
    podplane token or sign-in it came from was revoked (at once in this process)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(auth.until_revoked(app, grant.token_id),
                               timeout=max(0.0, grant.expires - time.time()))


async def forward(app: AppState, grant: Pass, method: str, path: str, query: str,
                  headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
    """One request to the space's server as podplane (the cluster's Kubernetes access)."""
    kube, target = await _target(app, grant, path, query)
    sent = {k: v for k, v in headers.items() if k.lower() in FORWARDED}
    return await kube.proxy_raw(method, render.NAMESPACE, access.service_name(grant.space),
                                render.PORT, target, sent, body)


@contextlib.asynccontextmanager
async def socket(app: AppState, grant: Pass, path: str, query: str, subprotocols: list[str]
                 ) -> AsyncIterator[ProxySocket]:
    """A WebSocket to the space's server (JupyterLab's kernels and terminals), as `forward`."""
    kube, target = await _target(app, grant, path, query)
    async with kube.proxy_socket(render.NAMESPACE, access.service_name(grant.space),
                                 render.PORT, target, subprotocols) as upstream:
        yield upstream


async def _target(app: AppState, grant: Pass, path: str, query: str) -> tuple[KubePort, str]:
    """The cluster's client and the path with the server's token added."""
    ctx = Ctx(principal=Principal(grant.who, Role.OPERATOR, grant.token_id, "ui"), app=app)
    _, kube = await kube_of(ctx, grant.cluster)
    token = access.token_of(await kube.get("v1", "Secret", render.token_secret(grant.space),
                                           render.NAMESPACE))
    params = f"{query}&token={quote(token)}" if query else f"token={quote(token)}"
    return kube, f"{path.lstrip('/')}?{params}"
