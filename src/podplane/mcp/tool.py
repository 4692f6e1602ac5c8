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

from podplane.domain.effects import Effect, Role, mcp_hints
from podplane.services.registry import ServiceSpec, effect_of

CONFIRM = "confirm"
STATUS_TOOL = "operation_wait"


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
        # Our tools only touch this control plane's own API: a closed world.
        return {"title": self.title, **mcp_hints(self.effect), "openWorldHint": False}

    @property
    def title(self) -> str:
        return self.name.replace("_", " ").capitalize()

    def input_schema(self) -> dict[str, Any]:
        props = {name: p.schema for name, p in self.params.items()}
        required = [name for name, p in self.params.items() if p.required]
        if self.needs_confirmation:
            props[CONFIRM] = {
                "type": "boolean", "const": True,
                "description": "Must be true: this action destroys something. Ask the user first.",
            }
            required.append(CONFIRM)
        return {"type": "object", "properties": props, "required": required,
                "additionalProperties": False}

    def describe(self) -> str:
        extra = []
        if self.effect.mutates and self.returns_operation:
            extra.append(f"Returns the operation; call {STATUS_TOOL} until it is done.")
        if self.needs_confirmation:
            extra.append("Destructive: needs confirm=true after the user agreed.")
        extra.append(f"REST: {self.method} {self.path}.")
        return " ".join([self.description, *extra])


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
    merged = {**base, **{k: v for k, v in schema.items() if k != "$ref"}}
    return {k: _inlined(v, defs, names=k == "properties") for k, v in merged.items()
            if k not in ("title", "$defs")}


def text(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "string", "description": description, **rules}, required)


def integer(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "integer", "description": description, **rules}, required)


def boolean(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "boolean", "description": description, **rules}, required)
