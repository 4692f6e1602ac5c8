"""The effect every service function declares once; roles, audit and MCP hints derive from it."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

# The dry-run switch of every mutating request, described once (the REST query parameter, the
# request bodies and the MCP tools all say it the same way; the MCP catalogue is loaded on
# every agent's connect, so the words are few).
DRY_RUN = "Plan only."
DryRun = Annotated[bool, Field(description=DRY_RUN)]


class Effect(StrEnum):
    READ = "read"
    CREATE = "create"
    MUTATE = "mutate"
    DESTROY = "destroy"

    @property
    def mutates(self) -> bool:
        return self is not Effect.READ


class Role(StrEnum):
    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}[self]

    def allows(self, needed: Role) -> bool:
        return self.rank >= needed.rank


def role_needed(effect: Effect) -> Role:
    """Viewer reads, operator creates and mutates, admin destroys."""
    if effect is Effect.READ:
        return Role.VIEWER
    if effect is Effect.DESTROY:
        return Role.ADMIN
    return Role.OPERATOR


def mcp_hints(effect: Effect) -> dict[str, bool]:
    """MCP ToolAnnotations hints for an effect."""
    return {
        "readOnlyHint": effect is Effect.READ,
        "destructiveHint": effect is Effect.DESTROY,
        "idempotentHint": effect in (Effect.READ, Effect.MUTATE),
    }
