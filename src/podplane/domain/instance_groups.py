"""Instance-group rules: capacity types, immutable fields, EFA-only, and the update allowlist."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field

from podplane.domain.catalog import CATALOG
from podplane.domain.errors import Conflict, InvalidInput
from podplane.domain.names import (
    AVAILABILITY_ZONE_PATTERN,
    DNS_LABEL_MAX,
    DNS_LABEL_PATTERN,
    INSTANCE_TYPE_MAX,
    INSTANCE_TYPE_PATTERN,
    SUBNET_ID_PATTERN,
    TRAINING_PLAN_ARN_MAX,
    TRAINING_PLAN_ARN_PATTERN,
    check_group_name,
)
from podplane.domain.subnet_sizing import check_fits_one_subnet

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
    "ImageId", "CapacityRequirements", "NetworkInterface", "KubernetesConfig",
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
    """Accelerated P-family types and training plans run with SMT on (2 threads per core);
    Grace CPUs (p6e-gb200) have no SMT, so 1 is all they take."""
    family = instance_type.removeprefix("ml.").split(".")[0]
    if family.startswith("p6e-gb"):
        return 1
    if capacity is CapacityType.TRAINING_PLAN or family.startswith(("p4", "p5", "p6")):
        return 2
    return 1


def deep_health_checks_for(instance_type: str) -> tuple[str, ...]:
    """The on-start deep health checks HyperPod defines for a type: GPU and Trainium types get
    InstanceStress, and InstanceConnectivity (multi-node NCCL/NCCOM) when they have EFA
    (AWS docs, HyperPod EKS "Deep health checks"). Other types get none."""
    entry = CATALOG.get(instance_type)
    if entry is None or not entry.accelerated:
        return ()
    return ("InstanceStress", "InstanceConnectivity") if entry.efa_interfaces \
        else ("InstanceStress",)


def for_update(described: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A group as UpdateCluster wants it: allowlisted fields only, with `changes` applied.

    UpdateCluster replaces the group's specification, so every field DescribeCluster returns
    under another name comes back too: TargetCount -> InstanceCount, MinCount ->
    MinInstanceCount, the desired labels and taints -> KubernetesConfig. ImageId is sent only
    when a change sets it: resubmitting Current/DesiredImageId would pin the group to today's
    AMI (AMI changes belong to UpdateClusterSoftware)."""
    renamed = ("ImageId", "KubernetesConfig")  # described under other names or shapes
    group = {k: v for k, v in described.items() if k in UPDATE_ALLOWLIST and k not in renamed}
    if "InstanceCount" not in group and "TargetCount" in described:
        group["InstanceCount"] = described["TargetCount"]
    if "MinCount" in described:
        group["MinInstanceCount"] = described["MinCount"]
    kubernetes = _kubernetes_config(described.get("KubernetesConfig") or {})
    if kubernetes:
        group["KubernetesConfig"] = kubernetes
    group.update(changes)
    return group


def _kubernetes_config(details: dict[str, Any]) -> dict[str, Any]:
    """ClusterKubernetesConfigDetails -> ClusterKubernetesConfig: what the group should have
    (Desired*, else Current*)."""
    labels = details.get("DesiredLabels", details.get("CurrentLabels"))
    taints = details.get("DesiredTaints", details.get("CurrentTaints"))
    out: dict[str, Any] = {}
    if labels:
        out["Labels"] = dict(labels)
    if taints:
        out["Taints"] = [dict(t) for t in taints]
    return out


# --- adding a group -------------------------------------------------------------------------

DEFAULT_EBS_GB = 500
MAX_EBS_GB = 16384
IPS_PER_NODE = 32   # a node plus its pods' VPC-CNI addresses, sized for placement headroom


# Each field of a new group is declared here once, with its rules: the REST body and the MCP
# tool's input schema (domain.group_requests) derive from these declarations.
GroupName = Annotated[str, Field(min_length=1, max_length=DNS_LABEL_MAX,
                                 pattern=DNS_LABEL_PATTERN,
                                 description="Group name, a DNS label.")]
InstanceTypeName = Annotated[str, Field(
    min_length=4, max_length=INSTANCE_TYPE_MAX, pattern=INSTANCE_TYPE_PATTERN,
    description="HyperPod instance type, e.g. ml.p5.48xlarge.")]
TrainingPlanArn = Annotated[str | None, Field(
    max_length=TRAINING_PLAN_ARN_MAX, pattern=TRAINING_PLAN_ARN_PATTERN,
    description="Only with capacity_type training-plan.")]


@dataclass(frozen=True)
class NewGroup:
    """The decisions behind a new instance group (everything else is derived)."""

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
    efa_only: Annotated[bool, Field(description="EFA-only network interface.")] = False
    subnet_id: Annotated[str | None, Field(
        pattern=SUBNET_ID_PATTERN,
        description="Put the group in this subnet (default: placed for you).")] = None
    new_subnet: Annotated[bool, Field(description="Create a new /20 compute subnet.")] = False

    @property
    def shape(self) -> GroupShape:
        return GroupShape(self.capacity_type, self.efa_only)

    def validate(self, efa_capable: dict[str, int]) -> None:
        check_group_name(self.name)
        check_count(self.count, allow_zero=False)
        if not self.instance_type.startswith("ml."):
            raise InvalidInput(f"{self.instance_type!r} is not a SageMaker instance type.",
                               hint="HyperPod types start with 'ml.', e.g. ml.g5.8xlarge.",
                               field="instance_type")
        check_fits_one_subnet(self.instance_type, self.count)
        if not 1 <= self.ebs_gb <= MAX_EBS_GB:
            raise InvalidInput(f"ebs_gb must be between 1 and {MAX_EBS_GB}.", field="ebs_gb")
        plan_needed = self.capacity_type is CapacityType.TRAINING_PLAN
        if plan_needed != bool(self.training_plan_arn):
            raise InvalidInput(
                "training_plan_arn goes with capacity_type 'training-plan', and only with it.",
                field="training_plan_arn")
        if self.subnet_id and self.new_subnet:
            raise InvalidInput("Give subnet_id or new_subnet, not both.", field="subnet_id")
        check_efa_only(self.instance_type, self.efa_only, efa_capable)


@dataclass(frozen=True)
class GroupPlan:
    """A group's derived decisions: what the cluster plan shows and the request carries."""

    name: str
    instance_type: str
    count: int
    capacity_type: CapacityType
    threads_per_core: int
    ebs_gb: int
    deep_health_checks: tuple[str, ...]
    training_plan_arn: str | None


@dataclass(frozen=True)
class GroupPlacement:
    """Where and how a group's instances boot: the lifecycle script, the execution role and
    the group's own subnet and security groups."""

    lifecycle: dict[str, Any]     # LifeCycleConfig: SourceS3Uri + OnCreate
    execution_role: str
    subnet_id: str
    security_group_ids: list[str]


def instance_group_request(group: GroupPlan, where: GroupPlacement, *,
                           efa_only: bool = False) -> dict[str, Any]:
    """The one builder of a new group's entry, for CreateCluster and UpdateCluster alike
    (SageMaker API Reference, ClusterInstanceGroupSpecification): the group's own subnet and
    security groups (OverrideVpcConfig), an EBS volume, and only the optional fields chosen."""
    spec: dict[str, Any] = {
        "InstanceGroupName": group.name, "InstanceType": group.instance_type,
        "InstanceCount": group.count,
        "LifeCycleConfig": where.lifecycle, "ExecutionRole": where.execution_role,
        "ThreadsPerCore": group.threads_per_core,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": group.ebs_gb}}],
        "OverrideVpcConfig": {"SecurityGroupIds": list(where.security_group_ids),
                              "Subnets": [where.subnet_id]},
    }
    if group.deep_health_checks:
        spec["OnStartDeepHealthChecks"] = list(group.deep_health_checks)
    if group.training_plan_arn:
        spec["TrainingPlanArn"] = group.training_plan_arn
    if group.capacity_type is CapacityType.SPOT:
        spec["CapacityRequirements"] = {"Spot": {}}
    if efa_only:
        spec["NetworkInterface"] = {"InterfaceType": "efa-only"}
    return spec


def group_spec(group: NewGroup, *, template: dict[str, Any], subnet_id: str,
               security_group_ids: list[str], deep_health_checks: list[str]) -> dict[str, Any]:
    """The UpdateCluster entry for a new group. Lifecycle config and execution role follow the
    cluster's first group (`template`), so every group boots the same way."""
    plan = GroupPlan(group.name, group.instance_type, group.count, group.capacity_type,
                     threads_per_core(group.instance_type, group.capacity_type), group.ebs_gb,
                     tuple(deep_health_checks), group.training_plan_arn)
    where = GroupPlacement(template["LifeCycleConfig"], template["ExecutionRole"], subnet_id,
                           security_group_ids)
    return instance_group_request(plan, where, efa_only=group.efa_only)


def efa_capable_types() -> dict[str, int]:
    """Instance type -> EFA interfaces, from the catalogue (EFA-only needs more than one)."""
    return {name: t.efa_interfaces for name, t in CATALOG.items() if t.efa_interfaces}
