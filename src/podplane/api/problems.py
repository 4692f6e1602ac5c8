"""Every error leaves as application/problem+json with a stable `code`; never a traceback."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from podplane.domain.errors import PodplaneError

log = logging.getLogger("podplane.api")
PROBLEM = "application/problem+json"

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


async def _podplane_error(_: Request, err: PodplaneError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
    return problem(err.status, err.code, err.title, err.message, hint=err.hint,
                   headers=headers, **_jsonable(err.extra))


async def _validation_error(_: Request, err: RequestValidationError) -> JSONResponse:
    errors = [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")),
         "type": str(e.get("type", ""))}
        for e in err.errors()
    ]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(first["loc"][1:] or first["loc"]) or "request"
    return problem(422, "invalid_input", "Invalid input", f"{where}: {first['msg']}",
                   errors=errors)


async def _http_error(_: Request, err: StarletteHTTPException) -> JSONResponse:
    code = _HTTP_CODES.get(err.status_code, f"http_{err.status_code}")
    return problem(err.status_code, code, code.replace("_", " ").capitalize(), str(err.detail),
                   headers=getattr(err, "headers", None))


async def _unexpected(request: Request, err: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem(500, "internal_error", "Internal error",
                   "Something went wrong on the server; it has been logged.")


def _jsonable(extra: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in extra.items() if isinstance(v, str | int | float | bool | list | dict)}
