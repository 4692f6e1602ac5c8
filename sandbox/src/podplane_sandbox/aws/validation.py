"""Request validation over botocore's service models, with AWS's own error wording.

AWS (Coral) services check every input member against the constraints of the service model:
required members, enum values, `pattern` (a Java regex that must match the whole value), `min`
and `max` (length of strings and lists, size of maps, value of numbers). A request breaking any
of them is refused before the operation runs, with every violation in one message:

    1 validation error detected: Value 'ml.x' at 'instanceGroups.1.member.instanceType'
    failed to satisfy constraint: Member must satisfy enum value set: [ml.p4d.24xlarge, ...]

(the wording of SageMaker's and Service Quotas' ValidationException). Member paths are
lowerCamelCase and list items are `name.N.member` (1-based). A JSON value of the wrong type is
a SerializationException, as the services' deserializers answer; a member the model does not
have is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from botocore.model import ListShape, MapShape, Shape, StructureShape

# Java character classes the models use, approximated generously (a value AWS accepts must
# never be refused here; the sources' exact Unicode categories matter less than that).
_JAVA_CLASSES = {
    r"\p{L}": r"A-Za-z\u00aa-\uffff", r"\p{M}": r"\u0300-\u036f\u1ab0-\u1aff\u20d0-\u20ff",
    r"\p{N}": r"0-9\u00b2-\u00b3\u00b9-\u00be\u0660-\u0669",
    r"\p{Z}": r" \u00a0\u2000-\u200a\u3000",
    r"\p{S}": r"$+<=>^`|~\u00a2-\u00a9\u00ac-\u00b1\u00b4", r"\p{P}": r"!-#%-*,-/:;?@\[-\]_{}",
    r"\p{Alnum}": r"A-Za-z0-9",
}
_SURROGATE_PAIRS = r"\uD800\uDC00-\uDBFF\uDFFF"


@dataclass
class Report:
    constraint: list[str] = field(default_factory=list)   # -> ValidationException
    serialization: list[str] = field(default_factory=list)  # -> SerializationException

    def message(self) -> str:
        n = len(self.constraint)
        return (f"{n} validation error{'s' if n > 1 else ''} detected: "
                + "; ".join(self.constraint))


def validate_input(shape: StructureShape, params: dict[str, Any]) -> Report:
    report = Report()
    _structure(shape, params, "", report)
    return report


def _check(shape: Shape, value: Any, path: str, report: Report) -> None:
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            report.serialization.append(f"Expected an object at '{path}'")
            return
        _structure(shape, value, path, report)  # type: ignore[arg-type]
    elif kind == "list":
        _list(shape, value, path, report)  # type: ignore[arg-type]
    elif kind == "map":
        _map(shape, value, path, report)  # type: ignore[arg-type]
    elif kind == "string":
        _string(shape, value, path, report)
    elif kind in ("integer", "long", "float", "double"):
        _number(shape, value, path, report)
    elif kind == "boolean" and not isinstance(value, bool):
        report.serialization.append(f"Expected a boolean at '{path}'")


def _structure(shape: StructureShape, value: dict[str, Any], path: str, report: Report) -> None:
    for name in shape.required_members:
        if value.get(name) is None:
            report.constraint.append(f"Value null at '{_join(path, name)}' failed to satisfy "
                                     "constraint: Member must not be null")
    for name, item in value.items():
        member = shape.members.get(name)
        # a member this model lacks is ignored, as AWS's deserializers do: clients built on a
        # newer model (the HyperPod CLI) send members added after our botocore
        if member is not None and item is not None:
            _check(member, item, _join(path, name), report)
    if shape.metadata.get("union") and sum(v is not None for v in value.values()) != 1:
        report.constraint.append(f"Value at '{path}' failed to satisfy constraint: Member "
                                 "must have exactly one member set")


def _list(shape: ListShape, value: Any, path: str, report: Report) -> None:
    if not isinstance(value, list):
        report.serialization.append(f"Expected a list at '{path}'")
        return
    _length(shape, value, len(value), path, report)
    for i, item in enumerate(value, 1):
        if item is not None:
            _check(shape.member, item, f"{path}.{i}.member", report)


def _map(shape: MapShape, value: Any, path: str, report: Report) -> None:
    if not isinstance(value, dict):
        report.serialization.append(f"Expected an object at '{path}'")
        return
    _length(shape, value, len(value), path, report)
    for key, item in value.items():
        _check(shape.key, key, f"{path}.key", report)
        if item is not None:
            _check(shape.value, item, f"{path}.{key}.member", report)


def _string(shape: Shape, value: Any, path: str, report: Report) -> None:
    if not isinstance(value, str):
        report.serialization.append(f"Expected a string at '{path}'")
        return
    enum = getattr(shape, "enum", None) or []
    if enum and value not in enum:
        _violation(report, value, path, f"Member must satisfy enum value set: [{', '.join(enum)}]")
        return
    _length(shape, value, len(value), path, report)
    pattern = shape.metadata.get("pattern")
    if pattern and (compiled := java_regex(pattern)) is not None \
            and compiled.fullmatch(value) is None:
        _violation(report, value, path,
                   f"Member must satisfy regular expression pattern: {pattern}")


def _number(shape: Shape, value: Any, path: str, report: Report) -> None:
    integral = shape.type_name in ("integer", "long")
    ok = isinstance(value, int) if integral else isinstance(value, int | float)
    if not ok or isinstance(value, bool):
        report.serialization.append(f"Expected a number at '{path}'")
        return
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and value < low:
        _violation(report, value, path, f"Member must have value greater than or equal to {low}")
    if high is not None and value > high:
        _violation(report, value, path, f"Member must have value less than or equal to {high}")


def _length(shape: Shape, value: Any, size: int, path: str, report: Report) -> None:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and size < low:
        _violation(report, value, path, f"Member must have length greater than or equal to {low}")
    if high is not None and size > high:
        _violation(report, value, path, f"Member must have length less than or equal to {high}")


def _violation(report: Report, value: Any, path: str, rule: str) -> None:
    report.constraint.append(f"Value {_render(value)} at '{path}' failed to satisfy "
                             f"constraint: {rule}")


def _render(value: Any) -> str:
    """How the Java services print a value: strings and lists quoted, numbers bare."""
    if isinstance(value, list):
        return "'[" + ", ".join(str(v) for v in value) + "]'"
    if isinstance(value, dict):
        return "'{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}'"
    if isinstance(value, bool | int | float):
        return str(value)
    return f"'{value}'"


def _join(path: str, name: str) -> str:
    camel = name[:1].lower() + name[1:]
    return f"{path}.{camel}" if path else camel


@lru_cache(maxsize=2048)
def java_regex(pattern: str) -> re.Pattern[str] | None:
    """A Java model pattern as a Python regex, or None if it cannot be translated (then the
    value is not checked against it; docs/sandbox.md says so)."""
    text = pattern.replace(_SURROGATE_PAIRS, r"\U00010000-\U0010ffff")
    for java, python in _JAVA_CLASSES.items():
        text = text.replace(java, python)
    text = re.sub(r"\$\{\d+,\d+\}", "$", text)  # `${1,256}`: a quantified anchor, a no-op
    try:
        return re.compile(text)
    except re.error:
        return None
