"""Console sign-in: exchange a token for an HttpOnly, SameSite=Strict session cookie.

PODPLANE_PUBLIC_URL decides the cookie: with an https address it is Secure and named with the
__Host- prefix; without one (local http use) it is neither, since a browser drops Secure cookies
set over plain http."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from podplane.api.auth import PrincipalDep, app_state, check_origin, session_cookie
from podplane.services.access import auth as auth_service

router = APIRouter(tags=["session"])


class SignIn(BaseModel):
    token: str = Field(min_length=1, max_length=256)


class Whoami(BaseModel):
    name: str
    role: str
    face: str


@router.post("/session", response_model=Whoami)
async def sign_in(body: SignIn, request: Request, response: Response) -> Whoami:
    app = app_state(request)
    check_origin(app, request.headers, request.url, required=False)
    principal, sid = await auth_service.open_session(app, body.token)
    response.set_cookie(
        session_cookie(app), sid, httponly=True, samesite="strict", path="/",
        max_age=app.settings.session_ttl_seconds,
        secure=app.settings.secure_cookies or request.url.scheme == "https",
    )
    return Whoami(name=principal.name, role=principal.role.value, face="ui")


@router.get("/session", response_model=Whoami)
async def whoami(principal: PrincipalDep) -> Whoami:
    return Whoami(name=principal.name, role=principal.role.value, face=principal.face)


@router.delete("/session", status_code=204)
async def sign_out(request: Request, response: Response, principal: PrincipalDep) -> Response:
    app = app_state(request)
    sid = request.cookies.get(session_cookie(app))
    if sid:
        await auth_service.close_session(app, sid)
    response = Response(status_code=204)
    response.delete_cookie(session_cookie(app), path="/", secure=app.settings.secure_cookies,
                           httponly=True, samesite="strict")
    return response
