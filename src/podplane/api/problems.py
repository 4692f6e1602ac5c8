"""Every error leaves as application/problem+json with a stable `code`; never a traceback."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from podplane.api.auth import refusal_before_body
from podplane.domain.errors import PodplaneError
from podplane.domain.principal import ANONYMOUS, Principal
from podplane.services.access.audit import record_limited, record_refusal
from podplane.services.access.auth import bearer_face
from podplane.services.registry import AUDITED, FLAGS, REFUSALS

log = logging.getLogger("podplane.api")
PROBLEM = "application/problem+json"
LIMITED = 429

_HTTP_CODES = {
    400: "bad_request", 401: "unauthenticated", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 406: "not_acceptable", 409: "conflict",
    413: "payload_too_large", 415: "unsupported_media_type", 422: "invalid_input",
    429: "rate_limited",
}


def problem(
    status: int, code: str, title: str, detail: str, *, hint: str | None = None,
    headers: dict[str, str] | None = None, **extra: Any,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"https://podplane.dev/problems/{code}", "title": title, "status": status,
        "code": code, "detail": detail,
    }
    if hint:
        body["hint"] = hint
    body.update({k: v for k, v in extra.items() if v is not None})
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def install(app: FastAPI) -> None:
    app.add_exception_handler(PodplaneError, _podplane_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)


async def _podplane_error(request: Request, err: PodplaneError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
    if err.status == 429 and isinstance(err.extra.get("retry_after"), int):
        headers = {"Retry-After": str(err.extra["retry_after"])}
        log.warning("rate limited on %s %s", request.method, request.url.path)
    if err.status >= 500:  # the cloud failed us: an operator wants to see it in the log
        log.warning("%s %s answered %d %s: %s", request.method, request.url.path, err.status,
                    err.code, err.message)
    if not getattr(err, AUDITED, False):
        await audit_refusal(request, err.status, err.code)
    return problem(err.status, err.code, err.title, err.message, hint=err.hint,
                   headers=headers, **_jsonable(err.extra))


async def audit_refusal(request: Request, status: int, code: str) -> None:
    """One audit row for a refusal no service audited (auth, role, validation): who (as far as
    known), through which face, what action, which target, with which flags. A 429 comes
    after authentication and is coalesced per token, action and second (record_limited)."""
    if status not in REFUSALS and status != LIMITED:
        return
    state = request.state
    principal = getattr(state, "podplane_principal", None) or _anonymous(request)
    route = request.scope.get("route")
    action = getattr(state, "podplane_action", None) or \
        f"{request.method} {getattr(route, 'path', request.url.path)}"
    flags = {f: request.query_params[f].lower() in ("1", "true", "yes", "on")
             for f in FLAGS if f in request.query_params}
    app = request.app.state.podplane
    try:
        if status == LIMITED:
            await record_limited(app, principal, action, request.url.path, code)
            return
        await record_refusal(app, principal, action, request.url.path, code, flags,
                             request.client.host if request.client is not None else "?")
    except Exception:  # the refusal still answers; the failure is logged
        log.exception("could not audit a refusal of %s %s", request.method, request.url.path)


def _anonymous(request: Request) -> Principal:
    """Nobody was recognised; the face is what they tried: a bearer token or the cookie."""
    if "authorization" not in request.headers and request.cookies:
        return ANONYMOUS.with_face("ui")
    return ANONYMOUS.with_face(bearer_face())


async def _validation_error(request: Request, err: RequestValidationError) -> JSONResponse:
    refused = await refusal_before_body(request)
    if refused is not None:
        return await _podplane_error(request, refused)
    errors = [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")),
         "type": str(e.get("type", ""))}
        for e in err.errors()
    ]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(first["loc"][1:] or first["loc"]) or "request"
    await audit_refusal(request, 422, "invalid_input")
    return problem(422, "invalid_input", "Invalid input", f"{where}: {first['msg']}",
                   errors=errors)


async def _http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
    code = _HTTP_CODES.get(err.status_code, f"http_{err.status_code}")
    await audit_refusal(request, err.status_code, code)
    return problem(err.status_code, code, code.replace("_", " ").capitalize(), str(err.detail),
                   headers=getattr(err, "headers", None))


async def _unexpected(request: Request, err: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem(500, "internal_error", "Internal error",
                   "Something went wrong on the server; it has been logged.")


def _jsonable(extra: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in extra.items() if isinstance(v, str | int | float | bool | list | dict)}
