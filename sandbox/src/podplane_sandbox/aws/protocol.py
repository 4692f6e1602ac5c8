"""Wire protocols, driven by botocore's service models (the same models the clients use).

- REST-JSON (EKS): route by method + requestUri template, read uri/querystring/body members.
- JSON 1.1 (SageMaker, Service Quotas): action from X-Amz-Target, members from the body.
Inputs are checked against every constraint of the model (`validation.py`), as AWS checks them.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qs, unquote

import botocore.session
from botocore.model import OperationModel, Shape

from podplane_sandbox.aws.errors import AwsError
from podplane_sandbox.aws.validation import validate_input


@lru_cache(maxsize=8)
def service_model(name: str) -> Any:
    return botocore.session.get_session().get_service_model(name)


@lru_cache(maxsize=4)
def rest_routes(service: str) -> list[tuple[str, re.Pattern[str], str]]:
    model = service_model(service)
    routes = []
    for op in model.operation_names:
        http = model.operation_model(op).http
        path = http["requestUri"].split("?")[0]
        pattern = re.sub(r"\{(\w+)\+?\}", r"(?P<\1>[^/]+)", path)
        routes.append((http["method"], re.compile(f"^{pattern}/?$"), op))
    # literal segments first so /addons/supported-versions beats /clusters/{name}
    routes.sort(key=lambda r: -len(r[1].pattern.replace("[^/]+", "")))
    return routes


def match_rest(service: str, method: str, path: str) -> tuple[str, dict[str, str]] | None:
    for verb, regex, op in rest_routes(service):
        m = regex.match(path)
        if m and verb == method:
            return op, {k: unquote(v) for k, v in m.groupdict().items()}
    return None


def parse_rest(op: OperationModel, uri: dict[str, str], query: str, body: bytes) -> dict[str, Any]:
    params: dict[str, Any] = {}
    shape = op.input_shape
    if shape is None:
        return params
    qs = parse_qs(query)
    payload = json.loads(body) if body.strip() else {}
    for name, member in shape.members.items():
        loc = member.serialization.get("location")
        wire = member.serialization.get("name", name)
        if loc == "uri" and wire in uri:
            params[name] = uri[wire]
        elif loc == "querystring" and wire in qs:
            values = qs[wire]
            params[name] = values if member.type_name == "list" else _scalar(member, values[0])
        elif loc is None and wire in payload:
            params[name] = payload[wire]
    return params


def _scalar(shape: Shape, raw: str) -> Any:
    if shape.type_name in ("integer", "long"):
        try:
            return int(raw)
        except ValueError:
            return raw
    if shape.type_name == "boolean":
        return raw.lower() == "true"
    return raw


def validate(op: OperationModel, params: dict[str, Any], error_code: str) -> None:
    if op.input_shape is None:
        return
    report = validate_input(op.input_shape, params)
    if report.serialization:
        raise AwsError("SerializationException", "; ".join(report.serialization))
    if report.constraint:
        raise AwsError(error_code, report.message())


def json_error(err: AwsError, rest: bool) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "application/x-amz-json-1.1", "x-amzn-ErrorType": err.code}
    if rest:
        headers["Content-Type"] = "application/json"
        body = {"message": err.message, **err.fields}
    else:
        body = {"__type": err.code, "Message": err.message, **err.fields}
    return err.status, headers, json.dumps(body).encode()


def json_ok(result: dict[str, Any], rest: bool) -> tuple[int, dict[str, str], bytes]:
    ctype = "application/json" if rest else "application/x-amz-json-1.1"
    return 200, {"Content-Type": ctype}, json.dumps(result).encode()
