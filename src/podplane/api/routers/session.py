"""Console sign-in: exchange a token for an HttpOnly, SameSite=Strict session cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from podplane.api.auth import SESSION_COOKIE, PrincipalDep, app_state, check_origin
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
        SESSION_COOKIE, sid, httponly=True, samesite="strict", path="/",
        max_age=app.settings.session_ttl_seconds, secure=request.url.scheme == "https",
    )
    return Whoami(name=principal.name, role=principal.role.value, face="ui")


@router.get("/session", response_model=Whoami)
async def whoami(principal: PrincipalDep) -> Whoami:
    return Whoami(name=principal.name, role=principal.role.value, face=principal.face)


@router.delete("/session", status_code=204)
async def sign_out(request: Request, response: Response, principal: PrincipalDep) -> Response:
    sid = request.cookies.get(SESSION_COOKIE)
    if sid:
        await auth_service.close_session(app_state(request), sid)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
