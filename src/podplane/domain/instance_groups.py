"""Instance-group rules: capacity types, immutable fields, EFA-only, and the update allowlist."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from podplane.domain.errors import Conflict, InvalidInput

MAX_COUNT = 1000


class CapacityType(StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    TRAINING_PLAN = "training-plan"


@dataclass(frozen=True)
class GroupShape:
    """The life-long identity of a group: these never change once created."""

    capacity_type: CapacityType
    efa_only: bool


# Fields UpdateCluster accepts for an existing group; anything else DescribeCluster returns
# (CurrentCount, Status, ...) must be dropped before resubmitting the group.
UPDATE_ALLOWLIST = (
    "InstanceGroupName", "InstanceType", "InstanceCount", "MinInstanceCount",
    "LifeCycleConfig", "ExecutionRole", "ThreadsPerCore", "InstanceStorageConfigs",
    "OnStartDeepHealthChecks", "TrainingPlanArn", "OverrideVpcConfig", "ScheduledUpdateConfig",
    "ImageId", "CapacityRequirements", "NetworkInterface",
)


def shape_of(described: dict[str, Any]) -> GroupShape:
    """Read a group's immutable shape from a DescribeCluster instance-group entry."""
    if described.get("TrainingPlanArn"):
        capacity = CapacityType.TRAINING_PLAN
    elif "Spot" in (described.get("CapacityRequirements") or {}):
        capacity = CapacityType.SPOT
    else:
        capacity = CapacityType.ON_DEMAND
    efa_only = (described.get("NetworkInterface") or {}).get("InterfaceType") == "efa-only"
    return GroupShape(capacity, efa_only)


def check_immutable(current: GroupShape, wanted: GroupShape) -> None:
    """Refuse a change to capacity type or EFA mode before any cloud call."""
    if wanted.capacity_type != current.capacity_type:
        raise Conflict(
            f"capacity_type is immutable: the group is {current.capacity_type.value}, "
            f"not {wanted.capacity_type.value}.",
            hint="Add a new instance group with the capacity type you want, then scale "
            "this one to zero or delete it.", field="capacity_type",
        )
    if wanted.efa_only != current.efa_only:
        raise Conflict(
            "efa_only is immutable for the life of an instance group.",
            hint="Add a new instance group with the network interface mode you want.",
            field="efa_only",
        )


def check_efa_only(instance_type: str, efa_only: bool, efa_capable: dict[str, int]) -> None:
    """EFA-only interfaces need a type with several EFA cards (`efa_capable`: type -> cards)."""
    if not efa_only or efa_capable.get(instance_type, 0) > 1:
        return
    allowed = sorted(t for t, cards in efa_capable.items() if cards > 1)
    raise InvalidInput(
        f"{instance_type} cannot use an EFA-only network interface.",
        hint="EFA-only needs several EFA cards; types that allow it: " + ", ".join(allowed),
        field="efa_only", allowed=allowed,
    )


def check_count(count: int, *, allow_zero: bool) -> None:
    low = 0 if allow_zero else 1
    if not low <= count <= MAX_COUNT:
        raise InvalidInput(f"count must be between {low} and {MAX_COUNT}, not {count}.",
                           field="count")


def threads_per_core(instance_type: str, capacity: CapacityType) -> int:
    """Accelerated P-family types and training plans run with SMT on (2 threads per core)."""
    family = instance_type.removeprefix("ml.").split(".")[0]
    if capacity is CapacityType.TRAINING_PLAN or family.startswith(("p4", "p5", "p6")):
        return 2
    return 1


def for_update(described: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A group as UpdateCluster wants it: allowlisted fields only, with `changes` applied."""
    group = {k: v for k, v in described.items() if k in UPDATE_ALLOWLIST}
    if "InstanceCount" not in group and "TargetCount" in described:
        group["InstanceCount"] = described["TargetCount"]
    if "ImageId" not in group:
        for source in ("DesiredImageId", "CurrentImageId"):
            if described.get(source):
                group["ImageId"] = described[source]
                break
    group.update(changes)
    return group
