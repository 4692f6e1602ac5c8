"""Throttling / access-denied faults for moto-served services, in each protocol's error shape."""

from __future__ import annotations

import json
from typing import Any, cast
from urllib.parse import parse_qs

from podplane_sandbox.aws import protocol
from podplane_sandbox.faults import Faults

Response = tuple[int, dict[str, str], bytes]

# (code, message, status) per protocol family
_THROTTLE = {"ec2": ("RequestLimitExceeded", "Request limit exceeded.", 503),
             "query": ("Throttling", "Rate exceeded", 400),
             "rest-xml": ("SlowDown", "Please reduce your request rate.", 503),
             "json": ("ThrottlingException", "Rate exceeded", 400)}
_DENIED = {"ec2": ("UnauthorizedOperation", "You are not authorized to perform this operation.",
                   403),
           "query": ("AccessDenied", "User is not authorized to perform this operation.", 403),
           "rest-xml": ("AccessDenied", "Access Denied", 403),
           "json": ("AccessDeniedException", "User is not authorized to perform this action.",
                    400)}


def injected_error(faults: Faults, service: str | None, environ: dict[str, Any],
                   body: bytes) -> Response | None:
    if service is None or not any(f["kind"] in ("throttling", "access_denied")
                                  for f in faults.items):
        return None
    action = request_action(environ, body)
    for kind, table in (("throttling", _THROTTLE), ("access_denied", _DENIED)):
        if faults.fire(kind, service=service, action=action):
            family = _family(service)
            code, message, status = table[family]
            return _render(family, code, message, status)
    return None


def request_action(environ: dict[str, Any], body: bytes) -> str:
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    if target:
        return cast("str", target.split(".", 1)[-1])
    form = parse_qs(body.decode("utf-8", "replace")) if body else {}
    form.update(parse_qs(environ.get("QUERY_STRING", "")))
    return (form.get("Action") or [environ.get("REQUEST_METHOD", "")])[0]


def _family(service: str) -> str:
    try:
        proto = protocol.service_model(service).metadata.get("protocol", "json")
    except Exception:  # a scope name botocore does not know: answer in JSON
        return "json"
    if proto == "ec2":
        return "ec2"
    if proto == "query":
        return "query"
    return "rest-xml" if proto == "rest-xml" else "json"


def _render(family: str, code: str, message: str, status: int) -> Response:
    if family == "json":
        return status, {"Content-Type": "application/x-amz-json-1.1"}, json.dumps(
            {"__type": code, "message": message}).encode()
    if family == "ec2":
        xml = (f"<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message>"
               "</Error></Errors><RequestID>sandbox</RequestID></Response>")
    elif family == "query":
        xml = (f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code>"
               f"<Message>{message}</Message></Error><RequestId>sandbox</RequestId>"
               "</ErrorResponse>")
    else:
        xml = f"<Error><Code>{code}</Code><Message>{message}</Message></Error>"
    return status, {"Content-Type": "text/xml"}, xml.encode()
