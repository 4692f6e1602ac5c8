"""Check raw JSON responses against botocore's output shapes: required members, no unknown
members, types, enums. The raw body is captured from botocore's `response-received` event."""

from __future__ import annotations

import json
from typing import Any

import botocore.session
from botocore.model import Shape

_SESSION = botocore.session.get_session()


def problems(service: str, operation: str, body: Any) -> list[str]:
    model = _SESSION.get_service_model(service).operation_model(operation)
    errors: list[str] = []
    if model.output_shape is not None:
        _check(model.output_shape, body, operation, errors)
    return errors


def error_problems(service: str, code: str, body: dict[str, Any]) -> list[str]:
    """An error body must fit the service's error shape when the model has one."""
    model = _SESSION.get_service_model(service)
    if code not in model.shape_names:
        return []  # e.g. ThrottlingException: not modelled; botocore reads code + message
    errors: list[str] = []
    _check(model.shape_for(code), {k: v for k, v in body.items() if k != "__type"}, code, errors)
    return errors


def _check(shape: Shape, value: Any, path: str, errors: list[str]) -> None:
    kind = shape.type_name
    if kind == "structure":
        _check_structure(shape, value, path, errors)
    elif kind == "list":
        if not isinstance(value, list):
            errors.append(f"{path}: expected list, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            _check(shape.member, item, f"{path}[{i}]", errors)
    elif kind == "map":
        if not isinstance(value, dict):
            errors.append(f"{path}: expected map")
            return
        for k, v in value.items():
            _check(shape.value, v, f"{path}.{k}", errors)
    else:
        _check_scalar(shape, value, path, errors)


def _check_structure(shape: Shape, value: Any, path: str, errors: list[str]) -> None:
    if not isinstance(value, dict):
        errors.append(f"{path}: expected structure, got {type(value).__name__}")
        return
    body_members = {m.serialization.get("name", name): m for name, m in shape.members.items()
                    if m.serialization.get("location") is None}
    for name in shape.required_members:
        member = shape.members[name]
        if member.serialization.get("location") is None and \
                member.serialization.get("name", name) not in value:
            errors.append(f"{path}: missing required {name}")
    for key, item in value.items():
        if key not in body_members:
            errors.append(f"{path}: unknown member {key}")
        else:
            _check(body_members[key], item, f"{path}.{key}", errors)


def _check_scalar(shape: Shape, value: Any, path: str, errors: list[str]) -> None:
    kind = shape.type_name
    ok = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "long": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "double": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "timestamp": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "blob": lambda v: isinstance(v, str),
    }[kind](value)
    if not ok:
        errors.append(f"{path}: expected {kind}, got {value!r}")
    elif kind == "string" and shape.enum and value not in shape.enum:
        errors.append(f"{path}: {value!r} not in enum")


class ShapeRecorder:
    """Attach to boto3 clients; every response body is checked against its output shape."""

    def __init__(self) -> None:
        self.checked: list[str] = []
        self.errors: list[str] = []

    def attach(self, client: Any) -> Any:
        client.meta.events.register("response-received", self._on_response)
        return client

    def _on_response(self, event_name: str, response_dict: dict[str, Any] | None = None,
                     **kwargs: Any) -> None:
        if response_dict is None:
            return
        _, service, operation = event_name.split(".")
        if service not in ("eks", "sagemaker", "service-quotas"):
            return
        raw = response_dict["body"]
        body = json.loads(raw) if raw else {}
        if response_dict["status_code"] >= 300:
            code = response_dict["headers"].get("x-amzn-ErrorType") or body.get("__type", "")
            self.checked.append(f"{service}.{operation}!{code}")
            self.errors.extend(error_problems(service, code, body))
            return
        self.checked.append(f"{service}.{operation}")
        self.errors.extend(problems(service, operation, body))
