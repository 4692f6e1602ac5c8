"""Structural-schema handling for custom resources, in the order the API server does it:
drop nulls, apply defaults, prune unknown fields, then validate (types, required, enum,
pattern, bounds) and report causes with field paths in the real API's wording."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

Schema = dict[str, Any]
ROOT_META = ("apiVersion", "kind", "metadata")


@dataclass
class Outcome:
    value: Any
    causes: list[dict[str, str]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def check(schema: Schema, obj: dict[str, Any]) -> Outcome:
    out = Outcome(None)
    root = {k: v for k, v in obj.items() if k not in ROOT_META}
    props = dict(schema.get("properties") or {})
    for key in ROOT_META:
        props.pop(key, None)
    body_schema = {**schema, "properties": props}
    value = _walk(body_schema, root, "", out)
    out.value = {**{k: obj[k] for k in ROOT_META if k in obj}, **(value or {})}
    return out


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _fmt(value: Any) -> str:
    return (
        json.dumps(value) if isinstance(value, str | int | float | bool) else f'"{_type_of(value)}"'
    )


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(schema: Schema, value: Any, path: str, out: Outcome) -> Any:
    if not _type_ok(schema, value, path, out):
        return value
    if isinstance(value, dict):
        value = _walk_object(schema, value, path, out)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            value = [_walk(items, v, f"{path}[{i}]", out) for i, v in enumerate(value)]
    _check_value(schema, value, path, out)
    return value


def _type_ok(schema: Schema, value: Any, path: str, out: Outcome) -> bool:
    want = schema.get("type")
    have = _type_of(value)
    if schema.get("x-kubernetes-int-or-string"):
        if have in ("integer", "string"):
            return True
        want = "integer or string"
    if not want or want == have or (want == "number" and have == "integer"):
        return True
    out.causes.append(
        {
            "reason": "FieldValueTypeInvalid",
            "field": path,
            # the real API prints the JSON type where the value would be
            "message": f'Invalid value: "{have}": {path} in body must be of type {want}: "{have}"',
        }
    )
    return False


def _walk_object(schema: Schema, value: dict[str, Any], path: str, out: Outcome) -> dict[str, Any]:
    props: dict[str, Schema] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = schema.get("x-kubernetes-embedded-resource") is True
    result: dict[str, Any] = {}
    for key, sub in props.items():
        if key not in value and "default" in sub:
            value = {**value, key: sub["default"]}
    for key, item in value.items():
        sub: Schema | None = props.get(key)
        if sub is None and isinstance(additional, dict):
            sub = additional
        if item is None and not (sub or {}).get("nullable"):
            continue
        if sub is not None:
            result[key] = _walk(sub, item, _join(path, key), out)
        elif preserve or additional is True or (embedded and key in ROOT_META):
            result[key] = item
        elif not props and additional is None and not schema.get("type"):
            result[key] = item
        else:
            out.unknown.append(_join(path, key))
    for key in schema.get("required") or []:
        if key not in result:
            out.causes.append(
                {
                    "reason": "FieldValueRequired",
                    "field": _join(path, key),
                    "message": "Required value",
                }
            )
    return result


def _check_value(schema: Schema, value: Any, path: str, out: Outcome) -> None:
    def bad(message: str, reason: str = "FieldValueInvalid") -> None:
        out.causes.append({"reason": reason, "field": path, "message": message})

    enum = schema.get("enum")
    if enum is not None and value not in enum:
        allowed = ", ".join(json.dumps(e) for e in enum)
        bad(
            f"Unsupported value: {_fmt(value)}: supported values: {allowed}",
            "FieldValueNotSupported",
        )
    if isinstance(value, str):
        pattern = schema.get("pattern")
        if pattern and not re.search(pattern, value):
            bad(f"Invalid value: {_fmt(value)}: {path} in body should match '{pattern}'")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            bad(f"Too long: may not be more than {schema['maxLength']} bytes", "FieldValueTooLong")
        if "minLength" in schema and len(value) < schema["minLength"]:
            bad(
                f"Invalid value: {_fmt(value)}: {path} in body should be at least "
                f"{schema['minLength']} chars long"
            )
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            bad(
                f"Invalid value: {value}: {path} in body should be greater than or equal to "
                f"{schema['minimum']}"
            )
        if "maximum" in schema and value > schema["maximum"]:
            bad(
                f"Invalid value: {value}: {path} in body should be less than or equal to "
                f"{schema['maximum']}"
            )
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            bad(
                f"Invalid value: {len(value)}: {path} in body should have at least "
                f"{schema['minItems']} items"
            )
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            bad(
                f"Too many: {len(value)}: must have at most {schema['maxItems']} items",
                "FieldValueTooMany",
            )
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if options and not _any_matches(options, value):
            bad(f"Invalid value: {_fmt(value)}: {path} in body must match {key}")


def _any_matches(options: list[Schema], value: Any) -> bool:
    for option in options:
        probe = Outcome(None)
        _type_ok(option, value, "", probe)
        if not probe.causes:
            _check_value(option, value, "", probe)
        if not probe.causes and all(
            k in value for k in option.get("required") or [] if isinstance(value, dict)
        ):
            return True
    return False
