"""What one MCP tool is: a REST call, the service it maps to, and what derives from that service.

Annotations and the role a caller needs come from the service function's declared effect
(`effect_of`), so the hint a client sees and the check the server makes cannot drift apart.
"""

from __future__ import annotations

import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

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


def text(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "string", "description": description, **rules}, required)


def integer(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "integer", "description": description, **rules}, required)


def boolean(description: str, required: bool = False, **rules: Any) -> Param:
    return Param({"type": "boolean", "description": description, **rules}, required)
