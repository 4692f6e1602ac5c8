"""Auth dependencies: bearer header or console cookie, Origin checks, role from the service.

The face is derived from how the caller authenticated (services.access.auth), never from a
header. Each authenticated request is admitted by the token's rate limit (api.limits). What
the request was (its action, its principal) is left on `request.state` so a refusal rendered
later (api.problems) is audited once, with who and what.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Request, WebSocket

from podplane.domain.errors import Forbidden, PodplaneError, Unauthenticated
from podplane.domain.principal import ANONYMOUS, Principal
from podplane.services.access import auth as auth_service
from podplane.services.access.audit import record_limited, record_refusal
from podplane.services.access.limits import limits_of
from podplane.services.context import AppState, Ctx
from podplane.services.registry import AUDITED, admit, effect_of

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
PRINCIPAL_STATE = "podplane_principal"
ACTION_STATE = "podplane_action"


def app_state(request: Request) -> AppState:
    return request.app.state.podplane  # type: ignore[no-any-return]


def session_cookie(app: AppState) -> str:
    return app.settings.session_cookie


async def current_principal(request: Request) -> Principal:
    app = app_state(request)
    principal = await _principal(app, request.headers, request.cookies, request.method,
                                 request.url, client_address(request))
    setattr(request.state, PRINCIPAL_STATE, principal)
    if not (principal.face == "agent" and auth_service.bearer_face() == "agent"):
        # An MCP tool's in-process REST call was admitted as the MCP request itself.
        limits_of(app).admit(principal.token_id)
    return principal


def client_address(conn: Request | WebSocket) -> str:
    return conn.client.host if conn.client is not None else "?"


async def _principal(app: AppState, headers: Any, cookies: Any, method: str, url: Any,
                     address: str) -> Principal:
    bearer = _bearer(headers.get("authorization"))
    if bearer is not None:
        return await auth_service.principal_for_token(app, bearer, auth_service.bearer_face(),
                                                      address)
    sid = cookies.get(session_cookie(app))
    if not sid:
        raise Unauthenticated(
            "Send 'Authorization: Bearer <token>' or sign in to the console.",
            hint="Create a token with: podplane token create --name NAME --role viewer",
        )
    if method not in SAFE_METHODS:
        check_origin(app, headers, url, required=True)
    return await auth_service.principal_for_session(app, sid, address)


def check_origin(app: AppState, headers: Any, url: Any, *, required: bool) -> None:
    """Cookie-authenticated writes and WebSocket handshakes must come from our own origin.

    With PODPLANE_PUBLIC_URL set only that origin (and PODPLANE_ALLOWED_ORIGINS) is ours: a
    proxy in front may rewrite Host and scheme. Without it, the address the request reached."""
    origin = headers.get("origin")
    if origin is None:
        if required:
            raise Forbidden("Cookie-authenticated requests must carry an Origin header.")
        return
    own = app.settings.own_origins()
    if app.settings.public_url is None:
        scheme = {"ws": "http", "wss": "https"}.get(url.scheme, url.scheme)
        own = own | {f"{scheme}://{url.netloc}"}
    if origin not in own:
        raise Forbidden(f"Origin {origin!r} is not allowed.",
                        hint="Set PODPLANE_PUBLIC_URL or PODPLANE_ALLOWED_ORIGINS to trust it.")


def _bearer(value: str | None) -> str | None:
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("The Authorization header must be 'Bearer <token>'.")
    return token.strip()


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def ctx_for(service_fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Ctx]]:
    """A dependency giving the Ctx the service function is called with, admitted by the
    service layer (services.registry.admit: the action's one role check, which the service
    then does not repeat). Runs before body validation, so an under-privileged caller gets
    403, never 422.
    """
    spec = effect_of(service_fn)

    async def dependency(request: Request) -> Ctx:
        setattr(request.state, ACTION_STATE, spec.action)  # for the audit of a refusal
        return admit(Ctx(principal=await current_principal(request), app=app_state(request)),
                     spec)

    dependency.__podplane_service__ = spec  # type: ignore[attr-defined]  # read by route tests
    return dependency


async def refusal_before_body(request: Request) -> PodplaneError | None:
    """FastAPI reads a JSON body before it runs the route's dependencies, so a body that does
    not parse would answer 422 to anyone. Who the caller is and what their role allows come
    first (issue 34, S11): the refusal ctx_for would have made, or None (a public route, or
    a caller already admitted)."""
    if getattr(request.state, PRINCIPAL_STATE, None) is not None:
        return None
    spec = _spec_of(request.scope.get("route"))
    if spec is None:
        return None
    try:
        setattr(request.state, ACTION_STATE, spec.action)
        admit(Ctx(principal=await current_principal(request), app=app_state(request)), spec)
    except PodplaneError as err:
        return err
    return None


def _spec_of(route: Any) -> Any:
    stack = list(getattr(getattr(route, "dependant", None), "dependencies", []))
    while stack:
        dep = stack.pop()
        spec = getattr(dep.call, "__podplane_service__", None)
        if spec is not None:
            return spec
        stack.extend(dep.dependencies)
    return None


async def websocket_principal(ws: WebSocket) -> Principal:
    """Who opened the WebSocket; a refusal (401, 403 origin, 429) is audited like REST's."""
    try:
        principal = await _websocket_caller(ws)
    except PodplaneError as err:
        await audit_ws_refused(ws, err)
        raise
    setattr(ws.state, PRINCIPAL_STATE, principal)
    try:
        limits_of(ws.app.state.podplane).admit(principal.token_id)
    except PodplaneError as err:
        await audit_ws_limited(ws, err)
        raise
    return principal


async def _websocket_caller(ws: WebSocket) -> Principal:
    app: AppState = ws.app.state.podplane
    bearer = _bearer(ws.headers.get("authorization"))
    if bearer is not None:
        check_origin(app, ws.headers, ws.url, required=False)
        principal = await auth_service.principal_for_token(app, bearer, "api",
                                                           client_address(ws))
    else:
        sid = ws.cookies.get(session_cookie(app))
        if not sid:
            raise Unauthenticated("WebSocket needs a bearer token or a console session.")
        check_origin(app, ws.headers, ws.url, required=True)
        principal = await auth_service.principal_for_session(app, sid, client_address(ws))
    return principal


async def audit_ws_refused(ws: WebSocket, err: PodplaneError) -> None:
    """A handshake refused for who the caller is or where it came from: one audit row, as a
    REST 401/403 gets (api/problems.audit_refusal)."""
    if err.status not in (401, 403) or getattr(err, AUDITED, False):
        return
    known = getattr(ws.state, PRINCIPAL_STATE, None)  # set when a role check refused
    caller = known if isinstance(known, Principal) else ANONYMOUS.with_face(
        "api" if "authorization" in ws.headers else "ui")
    route = ws.scope.get("route")
    await record_refusal(ws.app.state.podplane, caller,
                         f"WS {getattr(route, 'path', ws.url.path)}", ws.url.path, err.code,
                         address=client_address(ws))
    setattr(err, AUDITED, True)


async def audit_ws_limited(ws: WebSocket, err: PodplaneError) -> None:
    """A WebSocket refused with 4429 (rate, or the token's cap on open streams): audited like
    a REST 429, coalesced per token, action and second."""
    principal = getattr(ws.state, PRINCIPAL_STATE, None)
    if err.status != 429 or not isinstance(principal, Principal) or getattr(err, AUDITED, False):
        return
    route = ws.scope.get("route")
    action = f"WS {getattr(route, 'path', ws.url.path)}"
    await record_limited(ws.app.state.podplane, principal, action, ws.url.path, err.code)
    setattr(err, AUDITED, True)
