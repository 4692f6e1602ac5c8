"""What one MCP tool is: a REST call, the service it maps to, and what derives from that service.

Annotations and the role a caller needs come from the service function's declared effect
(`effect_of`), so the hint a client sees and the check the server makes cannot drift apart.
"""

from __future__ import annotations

import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from podplane.domain.clusters import ClusterName
from podplane.domain.effects import DRY_RUN as PLAN_ONLY
from podplane.domain.effects import Effect, Role, mcp_hints
from podplane.domain.names import REF_PATTERN
from podplane.services.registry import ServiceSpec, effect_of

CONFIRM = "confirm"
ANNOTATION_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                       "openWorldHint": True}
STATUS_TOOL = "operation_wait"
# String rules the server checks but does not advertise (ADR 0009): every agent loads the
# catalogue on connect, and a name's regex costs more tokens than it teaches. A call that breaks
# one is refused with a 422 naming the field and quoting the rule.
CHECKED_NOT_SHOWN = frozenset({"pattern", "minLength", "maxLength"})


@dataclass(frozen=True)
class Param:
    """One tool argument as a JSON-schema property."""

    schema: dict[str, Any]
    required: bool = False


@dataclass(frozen=True)
class Tool:
    name: str
    method: str
    path: str
    service: Callable[..., Awaitable[Any]]
    description: str
    params: dict[str, Param] = field(default_factory=dict)
    # Mutations run as operations, except the few that complete within the call (token revoke).
    returns_operation: bool = True

    @property
    def spec(self) -> ServiceSpec:
        return effect_of(self.service)

    @property
    def effect(self) -> Effect:
        return self.spec.effect

    @property
    def role(self) -> Role:
        return self.spec.role

    @property
    def needs_confirmation(self) -> bool:
        return self.effect is Effect.DESTROY

    @property
    def path_params(self) -> list[str]:
        return [f for _, f, _, _ in string.Formatter().parse(self.path) if f]

    def annotations(self) -> dict[str, Any]:
        # Our tools only touch this control plane's own API: a closed world. No title: ours
        # would only restate the name, which clients show when a tool has none (MCP
        # 2025-06-18, Tool.title and ToolAnnotations.title are optional).
        return {**mcp_hints(self.effect), "openWorldHint": False}

    def advertised_annotations(self) -> dict[str, Any]:
        """The hints as tools/list sends them: only those that differ from the defaults a
        client assumes (MCP 2025-06-18 ToolAnnotations: readOnlyHint false, destructiveHint
        true, idempotentHint false, openWorldHint true; the last three mean nothing for a
        read-only tool). Every agent loads these on connect, so each default costs tokens."""
        hints = self.annotations()
        if hints["readOnlyHint"]:
            return {"readOnlyHint": True, "openWorldHint": False}
        return {k: v for k, v in hints.items() if v != ANNOTATION_DEFAULTS[k]}

    def input_schema(self) -> dict[str, Any]:
        props = {name: p.schema for name, p in self.params.items()}
        required = [name for name, p in self.params.items() if p.required]
        if self.needs_confirmation:
            props[CONFIRM] = {
                "type": "boolean", "const": True,
                "description": "True once the user agreed.",
            }
            required.append(CONFIRM)
        return {"type": "object", "properties": props, "required": required,
                "additionalProperties": False}

    def advertised_schema(self) -> dict[str, Any]:
        """The input schema as tools/list shows it: `input_schema` less CHECKED_NOT_SHOWN."""
        shown: dict[str, Any] = _without(self.input_schema(), CHECKED_NOT_SHOWN)
        return shown

    def describe(self) -> str:
        # Every word here is loaded by every agent on connect (tests/diagnostics/
        # test_catalogue.py keeps the whole list under 12,000 tokens): the REST route and the
        # confirm rule live in docs/mcp.md and in the confirm argument's own description.
        if self.effect.mutates and self.returns_operation:
            return f"{self.description} Follow with {STATUS_TOOL}."
        return self.description


def fields_of(shape: Any, require: tuple[str, ...] = ()) -> dict[str, Param]:
    """The tool arguments of a REST body, read from the body's own declaration (the fields,
    their rules and descriptions are written once, in `domain`). `require` may make an
    optional field required for agents, never the other way round."""
    schema = TypeAdapter(shape).json_schema()
    defs = schema.get("$defs", {})
    required = set(schema.get("required", [])) | set(require)
    return {name: Param(_inlined(prop, defs), name in required)
            for name, prop in schema["properties"].items()}


def typed(shape: Any, description: str, required: bool = False) -> Param:
    """One argument declared by a domain type (e.g. ClusterName): its rules, our words."""
    schema = _inlined(TypeAdapter(shape).json_schema(), {})
    return Param({**schema, "description": description}, required)


def _inlined(schema: Any, defs: dict[str, Any], names: bool = False) -> Any:
    """JSON Schema without $refs or titles: MCP clients read each tool's schema alone.
    `names`: `schema` maps property names to schemas (keep every key)."""
    if isinstance(schema, list):
        return [_inlined(s, defs) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if names:
        return {k: _inlined(v, defs) for k, v in schema.items()}
    ref = schema.get("$ref", "")
    base = defs[ref.rsplit("/", 1)[-1]] if ref else {}
    merged = _optional({**base, **{k: v for k, v in schema.items() if k != "$ref"}})
    if "$ref" in merged:  # the kept option of `X | None` was itself a reference
        return _inlined(merged, defs)
    return {k: _inlined(v, defs, names=k == "properties") for k, v in merged.items()
            if k not in ("title", "$defs")}


def _without(schema: Any, keys: frozenset[str], names: bool = False) -> Any:
    """`schema` with `keys` removed at every level (never a property that bears such a name)."""
    if isinstance(schema, list):
        return [_without(s, keys) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if names:
        return {k: _without(v, keys) for k, v in schema.items()}
    return {k: _without(v, keys, names=k == "properties") for k, v in schema.items()
            if k not in keys}


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    """`X | None = None` is, to an agent, an argument it may leave out: X alone (`X | Y` for
    `X | Y | None`; null would only mean "not given", and every token of the catalogue is
    loaded on connect)."""
    options = schema.get("anyOf")
    if schema.get("default", 0) is not None or not isinstance(options, list):
        return schema
    kept = [o for o in options if o.get("type") != "null"]
    if not kept or len(kept) == len(options):
        return schema
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
    return {**kept[0], **rest} if len(kept) == 1 else {"anyOf": kept, **rest}


def text(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "string", "description": description, **rules}, required)


def integer(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "integer", "description": description, **rules}, required)


def boolean(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "boolean", "description": description, **rules}, required)


# Arguments many tools take, each described once and briefly (tools/list repeats them in
# every tool that takes them).
CLUSTER = typed(ClusterName, "Cluster.", required=True)
DRY_RUN = boolean(PLAN_ONLY, default=False)
NEXT_CURSOR = "next_cursor of the previous page."
OPERATION_ID = text("Operation id (op-...).", required=True, pattern=REF_PATTERN, minLength=1,
                    maxLength=40)
