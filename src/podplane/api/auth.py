"""Auth dependencies: bearer header or console cookie, Origin checks, role from the service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Request, WebSocket

from podplane.domain.errors import Forbidden, Unauthenticated
from podplane.domain.principal import FACES, Face, Principal
from podplane.services.access import auth as auth_service
from podplane.services.context import AppState, Ctx
from podplane.services.registry import check_role, effect_of

SESSION_COOKIE = "podplane_session"
FACE_HEADER = "x-podplane-face"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def app_state(request: Request) -> AppState:
    return request.app.state.podplane  # type: ignore[no-any-return]


async def current_principal(request: Request) -> Principal:
    return await _principal(app_state(request), request.headers, request.cookies,
                            request.method, request.url)


async def _principal(app: AppState, headers: Any, cookies: Any, method: str, url: Any) -> Principal:
    bearer = _bearer(headers.get("authorization"))
    if bearer is not None:
        return await auth_service.principal_for_token(app, bearer, _face(headers))
    sid = cookies.get(SESSION_COOKIE)
    if not sid:
        raise Unauthenticated(
            "Send 'Authorization: Bearer <token>' or sign in to the console.",
            hint="Create a token with: podplane token create --name NAME --role viewer",
        )
    if method not in SAFE_METHODS:
        check_origin(app, headers, url, required=True)
    return await auth_service.principal_for_session(app, sid)


def check_origin(app: AppState, headers: Any, url: Any, *, required: bool) -> None:
    """Cookie-authenticated writes and WebSocket handshakes must come from our own origin."""
    origin = headers.get("origin")
    if origin is None:
        if required:
            raise Forbidden("Cookie-authenticated requests must carry an Origin header.")
        return
    own = app.settings.own_origins() | {f"{url.scheme}://{url.netloc}".replace("ws", "http", 1)}
    if origin not in own:
        raise Forbidden(f"Origin {origin!r} is not allowed.",
                        hint="Set PODPLANE_ALLOWED_ORIGINS to add a trusted origin.")


def _bearer(value: str | None) -> str | None:
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("The Authorization header must be 'Bearer <token>'.")
    return token.strip()


def _face(headers: Any) -> Face:
    face = (headers.get(FACE_HEADER) or "api").lower()
    return face if face in FACES else "api"  # type: ignore[return-value]


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def ctx_for(service_fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Ctx]]:
    """A dependency giving a Ctx after checking the role the service function declares.

    Runs before body validation, so an under-privileged caller gets 403, never 422.
    """
    spec = effect_of(service_fn)

    async def dependency(request: Request, principal: PrincipalDep) -> Ctx:
        ctx = Ctx(principal=principal, app=app_state(request))
        check_role(ctx, spec)
        return ctx

    dependency.__podplane_service__ = spec  # type: ignore[attr-defined]  # read by route tests
    return dependency


async def websocket_principal(ws: WebSocket) -> Principal:
    app: AppState = ws.app.state.podplane
    bearer = _bearer(ws.headers.get("authorization"))
    if bearer is not None:
        check_origin(app, ws.headers, ws.url, required=False)
        return await auth_service.principal_for_token(app, bearer, _face(ws.headers))
    sid = ws.cookies.get(SESSION_COOKIE)
    if not sid:
        raise Unauthenticated("WebSocket needs a bearer token or a console session.")
    check_origin(app, ws.headers, ws.url, required=True)
    return await auth_service.principal_for_session(app, sid)
