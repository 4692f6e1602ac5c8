"""The instance-group requests, field by field: the REST bodies and the MCP tools' input
schemas derive from these declarations. `NewGroupRequest` carries exactly `NewGroup`'s fields
(a test holds them together) plus the dry-run switch."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated

from pydantic import ConfigDict, Field

from podplane.domain.clusters import InstanceTypeName, TrainingPlanArn
from podplane.domain.instance_groups import (
    DEFAULT_EBS_GB,
    MAX_COUNT,
    MAX_EBS_GB,
    CapacityType,
    NewGroup,
)
from podplane.domain.names import (
    AVAILABILITY_ZONE_PATTERN,
    DNS_LABEL_MAX,
    DNS_LABEL_PATTERN,
    SUBNET_ID_PATTERN,
)

GroupName = Annotated[str, Field(min_length=1, max_length=DNS_LABEL_MAX,
                                 pattern=DNS_LABEL_PATTERN,
                                 description="The instance group's name (a DNS label).")]
DryRun = Annotated[bool, Field(description="Return the plan without acting (or ?dry_run).")]
STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True, kw_only=True)
class NewGroupRequest:
    """Add a group: capacity type, EFA-only and subnet placement are decided together."""

    __pydantic_config__ = STRICT
    name: GroupName
    instance_type: InstanceTypeName
    count: Annotated[int, Field(ge=1, le=MAX_COUNT, description="Number of nodes.")]
    availability_zone: Annotated[str | None, Field(
        pattern=AVAILABILITY_ZONE_PATTERN,
        description="AZ name (default: the first group's). A training plan's AZ overrides "
        "it.")] = None
    ebs_gb: Annotated[int, Field(ge=1, le=MAX_EBS_GB,
                                 description="Extra EBS volume per node, GiB.")] = DEFAULT_EBS_GB
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    training_plan_arn: TrainingPlanArn = None
    efa_only: Annotated[bool, Field(description="EFA-only network interface (immutable).")] = False
    subnet_id: Annotated[str | None, Field(
        pattern=SUBNET_ID_PATTERN,
        description="Put the group in this subnet (default: placed for you).")] = None
    new_subnet: Annotated[bool, Field(description="Create a new /20 compute subnet.")] = False
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
