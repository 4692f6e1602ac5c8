"""The MCP face mounted at /mcp/ (streamable HTTP) on the control plane's own app.

Every HTTP request to /mcp/ must carry a valid bearer token: without one it gets a 401
problem before the MCP SDK sees a byte. The session an MCP client opens is bound to the
token that opened it. Tools then call REST in-process with that same token.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from podplane.domain.errors import Forbidden, NotFound, PodplaneError, Unauthenticated
from podplane.domain.principal import ANONYMOUS, Principal
from podplane.mcp.rest import Caller, in_process_client
from podplane.mcp.server import build_server
from podplane.mcp.sessions import TokenSessions
from podplane.services.access import auth as auth_service
from podplane.services.access.audit import record_limited, record_refusal
from podplane.services.access.limits import STREAMS, limits_of
from podplane.services.context import AppState
from podplane.services.registry import REFUSALS

MOUNT = "/mcp"
_PRINCIPAL = "podplane.principal"
_TOKEN = "podplane.token"


class McpHttp:
    """ASGI app for /mcp/: bearer auth, then the SDK's streamable-HTTP session manager."""

    def __init__(self, app: ASGIApp, state: AppState) -> None:
        self.app = app  # the whole control plane, for in-process REST calls
        self.state = state
        self.manager = StreamableHTTPSessionManager(
            app=build_server(self._caller),
            session_idle_timeout=state.settings.mcp_session_idle_seconds)
        self.sessions = TokenSessions(self.manager, state)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the SDK's session manager for the app's lifetime.

        Its task group lives in a task of its own: a lifespan may be entered and left in
        different tasks (test fixtures do), and a task group must exit where it entered.
        """
        started, stop = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with self.manager.run():
                started.set()
                await stop.wait()

        task = asyncio.create_task(hold(), name="mcp-session-manager")
        ready = asyncio.create_task(started.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            ready.cancel()
            task.result()  # surfaces why the manager could not start
        try:
            yield
        finally:
            await self.sessions.close()
            stop.set()
            await task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no WebSocket transport for MCP
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = Headers(scope=scope)
        principal: Principal | None = None
        try:
            if _below_mount(scope) not in ("", "/"):
                raise NotFound("The MCP endpoint is /mcp/ itself.")
            principal, token = await self._authenticate(headers, _address(scope))
            limits = limits_of(self.state)
            limits.admit(principal.token_id)
            opens = headers.get("mcp-session-id") is None   # an initialize opens one
            with limits.holding(STREAMS, principal.token_id), (
                    self.sessions.opening_one(principal.token_id) if opens
                    else contextlib.nullcontext()):
                scope[_PRINCIPAL], scope[_TOKEN] = principal, token
                # The SDK binds a session to this identity: another token cannot ride it.
                scope["user"] = AuthenticatedUser(AccessToken(
                    token="-", client_id=principal.token_id, scopes=[principal.role.value]))
                await self._until_revoked(principal, scope, receive, send)
        except PodplaneError as err:
            if err.status in REFUSALS:
                who = principal or ANONYMOUS.with_face("agent")
                await record_refusal(self.state, who, "mcp.request", MOUNT + "/", err.code,
                                     address=_address(scope))
            elif err.status == 429 and principal is not None:
                await record_limited(self.state, principal, "mcp.request", MOUNT + "/", err.code)
            await _problem(err)(scope, receive, send)

    async def _until_revoked(self, principal: Principal, scope: Scope, receive: Receive,
                             send: Send) -> None:
        """Serve the request; if the token is revoked meanwhile, end it (and its stream)."""
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                self.sessions.opened(principal.token_id, list(message.get("headers") or []))
            await send(message)

        serving = asyncio.create_task(self.manager.handle_request(scope, receive, tracked))
        revoked = asyncio.create_task(auth_service.until_revoked(self.state, principal.token_id))
        done, _ = await asyncio.wait({serving, revoked}, return_when=asyncio.FIRST_COMPLETED)
        if serving in done:
            revoked.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await revoked
            return serving.result()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        if not started:
            raise Unauthenticated("The token was revoked.")
        with contextlib.suppress(Exception):  # end the open stream where it stands
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _authenticate(self, headers: Headers,
                            address: str | None = None) -> tuple[Principal, str]:
        scheme, _, token = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated(
                "MCP calls need 'Authorization: Bearer <token>'.",
                hint="Create one with: podplane token create --name my-agent --role viewer")
        origin = headers.get("origin")
        if origin is not None and origin not in self.state.settings.own_origins():
            raise Forbidden(f"Origin {origin!r} is not allowed.",
                            hint="Set PODPLANE_ALLOWED_ORIGINS to add a trusted origin.")
        principal = await auth_service.principal_for_token(self.state, token.strip(), "agent",
                                                           address)
        return principal, token.strip()

    async def _caller(self, ctx: ServerRequestContext[Any, Any]) -> Caller:
        scope = ctx.request.scope if ctx.request is not None else {}
        principal, token = scope.get(_PRINCIPAL), scope.get(_TOKEN)
        if not isinstance(principal, Principal) or not isinstance(token, str):
            raise RuntimeError("MCP request reached a tool without authentication")

        async def refused(action: str, target: str, problem: dict[str, Any],
                          flags: dict[str, bool]) -> None:
            await record_refusal(self.state, principal, action, target,
                                 str(problem.get("code", "refused")), flags)

        return Caller(principal.role, lambda: in_process_client(self.app, token), refused)


def mount(app: Any) -> McpHttp:
    """Mount the MCP face on the FastAPI app; enter `face.running()` in the app's lifespan."""
    face = McpHttp(app, app.state.podplane)
    app.mount(MOUNT, face)
    return face


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "?"


def _below_mount(scope: Scope) -> str:
    path, root = str(scope["path"]), str(scope.get("root_path", ""))
    return path[len(root):] if root and path.startswith(root) else path


def _problem(err: PodplaneError) -> JSONResponse:
    body: dict[str, Any] = {"type": f"https://podplane.dev/problems/{err.code}", "title": err.title,
                            "status": err.status, "code": err.code, "detail": err.message}
    if err.hint:
        body["hint"] = err.hint
    headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
    return JSONResponse(body, status_code=err.status, media_type="application/problem+json",
                        headers=headers)
