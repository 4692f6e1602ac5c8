"""The spaces' own origins, in front of the app: a request whose Host names a space
(`<space>.<cluster>.<spaces_domain>`) is a browser's request to that space's server, under its
base URL. The first carries a ticket from `POST .../spaces/{name}/open` and is answered with the
space's session cookie and a redirect without it; the others carry that cookie. Everything else
goes to podplane as before (services/spaces/gateway.py, docs/spaces.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketState

from podplane.api.problems import problem
from podplane.cloud.ports_kube import ProxySocket
from podplane.domain.errors import Forbidden, NotFound, PodplaneError
from podplane.domain.spaces import passes, render
from podplane.services.context import AppState
from podplane.services.spaces import gateway

MAX_BODY = 16 * 1024 * 1024   # a notebook saved through the contents API
KEPT = ("content-type", "cache-control", "etag", "last-modified", "location")


class SpacesGateway:
    def __init__(self, app: ASGIApp, state: AppState) -> None:
        self.app, self.state = app, state
        self.suffix = ("." + state.settings.spaces_domain).lower().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        where = self._space_of(scope) if scope["type"] in ("http", "websocket") else None
        if where is None:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":   # kernels and terminals
            return await self._socket(WebSocket(scope, receive, send), *where)
        try:
            answer = await self._answer(scope, receive, *where)
        except PodplaneError as refused:
            answer = problem(refused.status, refused.code, refused.title, refused.message,
                             hint=refused.hint)
        await answer(scope, receive, send)

    def _space_of(self, scope: Scope) -> tuple[str, str] | None:
        """Runs on every request podplane serves: a scan of the raw headers, and no parsing
        unless the Host names the spaces' domain."""
        for key, value in scope["headers"]:
            if key == b"host":
                if self.suffix not in value.lower():
                    return None
                return passes.parse_host(value.decode("latin-1"),
                                         self.state.settings.spaces_domain)
        return None

    async def _answer(self, scope: Scope, receive: Receive, name: str, cluster: str
                      ) -> Response:
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        if not path.startswith(render.base_path(cluster, name)):
            return JSONResponse({"detail": "Not a path of this space."}, status_code=404)
        query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        ticket = next((v for k, v in query if k == gateway.TICKET), None)
        if ticket is not None:
            rest = urlencode([(k, v) for k, v in query if k != gateway.TICKET])
            answer = RedirectResponse(path + (f"?{rest}" if rest else ""), status_code=303)
            answer.set_cookie(gateway.COOKIE, gateway.exchange(self.state, ticket, cluster,
                                                               name),
                              max_age=passes.SESSION_SECONDS, httponly=True, samesite="lax",
                              secure=(self.state.settings.public_url or "").startswith("https"))
            return answer
        headers = Headers(scope=scope)
        grant = await gateway.session_of(self.state, _cookie(headers), cluster, name)
        body = await _body(receive)
        if body is None:
            return problem(413, "payload_too_large", "Payload too large",
                           f"Requests to a space are limited to {MAX_BODY} bytes.")
        status, got, content = await gateway.forward(
            self.state, grant, scope["method"], path, scope["query_string"].decode("latin-1"),
            dict(headers), body)
        kept = {k: v for k, v in got.items() if k.lower() in KEPT}
        kept.update({"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})
        return Response(content, status_code=status, headers=kept)


    async def _socket(self, ws: WebSocket, name: str, cluster: str) -> None:
        """Spliced to the space's server once the handshake passes what a request must, and
        comes from a page of this space's own origin: cookies ride along on a WebSocket from
        any page, so without the Origin check another site, or another space under the same
        domain, could drive this space's kernels (RFC 6455, section 10.2)."""
        path = (ws.scope.get("raw_path") or ws.scope["path"].encode()).decode("latin-1")
        try:
            if not path.startswith(render.base_path(cluster, name)):
                raise NotFound("Not a path of this space.")
            if urlsplit(ws.headers.get("origin", "")).netloc.lower() != \
                    ws.headers.get("host", "").lower():
                raise Forbidden("A space's sockets open only from its own pages.")
            grant = await gateway.session_of(self.state, _cookie(ws.headers), cluster, name)
            offered = [p.strip() for p in ws.headers.get("sec-websocket-protocol", "").split(",")
                       if p.strip()]
            async with gateway.socket(self.state, grant, path,
                                      ws.scope["query_string"].decode("latin-1"),
                                      offered) as upstream:
                await ws.accept(subprotocol=upstream.subprotocol)
                await _splice(ws, upstream, gateway.session_ended(self.state, grant))
        except PodplaneError as refused:
            if ws.application_state is WebSocketState.CONNECTING:
                await ws.send_denial_response(problem(refused.status, refused.code,
                                                      refused.title, refused.message,
                                                      hint=refused.hint))
        if ws.application_state is WebSocketState.CONNECTED:
            await ws.close()


async def _splice(ws: WebSocket, upstream: ProxySocket, ended: Awaitable[None]) -> None:
    """Messages both ways until either side closes or the session ends."""
    async def down() -> None:
        async for message in upstream.messages():
            await (ws.send_text(message) if isinstance(message, str)
                   else ws.send_bytes(message))

    async def up() -> None:
        while (message := await ws.receive())["type"] != "websocket.disconnect":
            text = message.get("text")
            await upstream.send(text if text is not None else message.get("bytes") or b"")

    tasks = [asyncio.create_task(down()), asyncio.create_task(up()),
             asyncio.ensure_future(ended)]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _cookie(headers: Headers) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == gateway.COOKIE:
            return value
    return None


async def _body(receive: Receive) -> bytes | None:
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
