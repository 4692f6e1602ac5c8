"""With PODPLANE_PUBLIC_URL set, a request must name a host podplane answers to (issue 34,
S14): a DNS-rebinding page reaches the server under the attacker's own name, so its `Host`
is that name. Allowed: the public URL's host, PODPLANE_ALLOWED_HOSTS (a proxy that rewrites
`Host`), and loopback names on any port (the SSM port-forward, the host's own checks).
Without a public URL (local use) every Host is served, as before."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from podplane.settings import Settings

LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})


def allowed_hosts(settings: Settings) -> frozenset[str] | None:
    if settings.public_url is None:
        return None
    parts = urlsplit(settings.public_url)
    default = {"https": 443, "http": 80}.get(parts.scheme)
    name = (parts.hostname or "").lower()
    found = {name, f"{name}:{parts.port or default}"}
    return frozenset(found | {h.lower() for h in settings.allowed_hosts})


class HostCheck:
    def __init__(self, app: ASGIApp, allowed: frozenset[str] | None) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allowed is None or scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        host = (Headers(scope=scope).get("host") or "").lower()
        if host in self.allowed or host.rsplit(":", 1)[0] in LOOPBACK or host in LOOPBACK:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            return await send({"type": "websocket.close", "code": 1008})
        body = {"type": "https://podplane.dev/problems/host_not_allowed",
                "title": "Host not allowed", "status": 421, "code": "host_not_allowed",
                "detail": "This server answers only to its public address.",
                "hint": "Use PODPLANE_PUBLIC_URL's host, or list a proxy's in "
                        "PODPLANE_ALLOWED_HOSTS."}
        await JSONResponse(body, status_code=421, media_type="application/problem+json")(
            scope, receive, send)
