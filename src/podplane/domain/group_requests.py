"""The instance-group requests: the REST bodies and the MCP tools' input schemas derive from
these declarations. `NewGroupRequest` is the domain's `NewGroup` (its fields declared once,
there) plus the dry-run switch."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated

from pydantic import ConfigDict, Field

from podplane.domain.effects import DryRun
from podplane.domain.instance_groups import (
    MAX_COUNT,
    CapacityType,
    GroupName,
    NewGroup,
)

__all__ = ["GroupName", "NewGroupRequest", "ScaleRequest"]

STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True, kw_only=True)
class NewGroupRequest(NewGroup):
    """Add a group: capacity type, EFA-only and subnet placement are decided together."""

    __pydantic_config__ = STRICT
    dry_run: DryRun = False

    def group(self) -> NewGroup:
        return NewGroup(**{f.name: getattr(self, f.name) for f in fields(NewGroup)})


@dataclass(frozen=True, kw_only=True)
class ScaleRequest:
    """PATCH a group: only `count` changes; the immutable fields are refused if they differ."""

    __pydantic_config__ = STRICT
    count: Annotated[int | None, Field(ge=0, le=MAX_COUNT,
                                       description="The new node count (0 allowed).")] = None
    capacity_type: Annotated[CapacityType | None, Field(
        description="Immutable: refused if different from the group's.")] = None
    efa_only: Annotated[bool | None, Field(
        description="Immutable: refused if different.")] = None
    confirm: Annotated[bool, Field(
        description="Required for a scale-down: fewer nodes terminates instances.")] = False
    dry_run: DryRun = False
