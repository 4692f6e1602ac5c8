"""A cluster: the decisions a user makes, and everything podplane derives from them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from podplane.domain.dependencies import CORE_UNITS, Unit
from podplane.domain.errors import InvalidInput
from podplane.domain.instance_groups import (
    DEFAULT_EBS_GB,
    MAX_COUNT,
    CapacityType,
    GroupPlan,
    InstanceTypeName,
    TrainingPlanArn,
    check_count,
    deep_health_checks_for,
    threads_per_core,
)
from podplane.domain.names import (
    AVAILABILITY_ZONE_PATTERN,
    DNS_LABEL_MAX,
    DNS_LABEL_PATTERN,
    EKS_CLUSTER_PATTERN,
    HYPERPOD_PATTERN,
    REGION_PATTERN,
    check_cluster_name,
    derived_name,
)
from podplane.domain.network import VpcLayout, plan_vpc
from podplane.domain.subnet_sizing import check_fits_one_subnet

KUBERNETES_VERSION = "1.33"
FIRST_GROUP = "accelerated-1"
DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")
# What runs without nodes comes before HyperPod; add-ons whose replicas need nodes after it.
CREATE_STEPS = ("preflight", "network", "eks", "access", "dependencies", "hyperpod",
                "node_dependencies", "storage", "verify")


# Each field of a cluster is declared here once, with its rules: the REST request model, the
# MCP tools' input schemas and the JSON an operation stores all derive from these declarations.
ClusterName = Annotated[str, Field(
    min_length=1, max_length=DNS_LABEL_MAX, pattern=DNS_LABEL_PATTERN,
    description="Cluster name, a DNS label (it also names the EKS and HyperPod clusters).")]
WarningCode = Annotated[str, Field(max_length=64, pattern=r"^[a-z_]+$")]


@dataclass(frozen=True, kw_only=True)
class ClusterSpec:
    """Only decisions: everything else is derived and shown in the plan."""

    name: ClusterName
    region: Annotated[str, Field(pattern=REGION_PATTERN,
                                 description="The control plane's region.")] = "us-west-2"
    availability_zone: Annotated[str, Field(
        pattern=AVAILABILITY_ZONE_PATTERN,
        description="AZ of the accelerated nodes.")]
    instance_type: InstanceTypeName
    count: Annotated[int, Field(ge=1, le=MAX_COUNT, description="Number of instances.")]
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    training_plan_arn: TrainingPlanArn = None
    deep_health_checks: Annotated[bool, Field(
        description="On-start stress and connectivity checks; keep on unless the user says "
        "no.")] = True

    def validate(self) -> None:
        check_cluster_name(self.name)
        check_count(self.count, allow_zero=False)
        if not self.instance_type.startswith("ml."):
            raise InvalidInput(f"{self.instance_type!r} is not a SageMaker instance type.",
                               hint="HyperPod types start with 'ml.', e.g. ml.p5.48xlarge.",
                               field="instance_type")
        check_fits_one_subnet(self.instance_type, self.count)
        plan_needed = self.capacity_type is CapacityType.TRAINING_PLAN
        if plan_needed != bool(self.training_plan_arn):
            raise InvalidInput(
                "training_plan_arn goes with capacity_type 'training-plan', and only with it.",
                field="training_plan_arn")


@dataclass(frozen=True, kw_only=True)
class ClusterRequest(ClusterSpec):
    """A create (or plan) request: the decisions, and the pre-flight warnings accepted."""

    override_warnings: Annotated[list[WarningCode], Field(
        max_length=10,
        description="Pre-flight warnings you accept, e.g. training_plan_az_adopted.",
    )] = field(default_factory=list)

    def spec(self) -> ClusterSpec:
        return ClusterSpec(**{k: getattr(self, k) for k in SPEC_FIELDS})


@dataclass(frozen=True, kw_only=True)
class ImportRequest:
    """An existing EKS cluster (and its HyperPod cluster) to manage under `name`."""

    name: ClusterName
    eks_cluster_name: Annotated[str | None, Field(
        max_length=100, pattern=EKS_CLUSTER_PATTERN,
        description="The EKS cluster's name (default: name).")] = None
    hyperpod_cluster_name: Annotated[str | None, Field(
        max_length=63, pattern=HYPERPOD_PATTERN,
        description="The HyperPod cluster orchestrated by it, if any.")] = None


# ClusterSpec <-> the JSON an operation and the cluster row store (the same field names).
SPEC: TypeAdapter[ClusterSpec] = TypeAdapter(ClusterSpec)
SPEC_FIELDS = tuple(f.name for f in fields(ClusterSpec))


@dataclass(frozen=True)
class ClusterPlan:
    spec: ClusterSpec
    vpc: VpcLayout
    kubernetes_version: str
    group: GroupPlan
    units: tuple[Unit, ...]
    bucket: str
    node_recovery: str = "Automatic"
    node_provisioning_mode: str = "Continuous"
    steps: tuple[str, ...] = CREATE_STEPS
    notes: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """The plan as the API and the console show it (dry_run=true)."""
        return {
            "cluster": self.spec.name, "region": self.spec.region,
            "kubernetes_version": self.kubernetes_version, "steps": list(self.steps),
            "network": _plain(asdict(self.vpc)), "instance_group": _plain(asdict(self.group)),
            "node_recovery": self.node_recovery,
            "node_provisioning_mode": self.node_provisioning_mode,
            "dependencies": [{"name": u.name, "kind": u.kind, "version": u.version or "default"}
                             for u in self.units],
            "storage": {"bucket": self.bucket, "mount": "s3-claim (Mountpoint for S3 CSI)"},
            "notes": list(self.notes),
            "eta_minutes": list(eta_minutes(self.group.deep_health_checks != ())),
        }


def eta_minutes(deep_health_checks: bool) -> tuple[int, int]:
    """How long a create takes on AWS: EKS ~10 min, add-ons ~3, HyperPod 10-15, checks 60-90."""
    low, high = 25, 40
    return (low + 60, high + 90) if deep_health_checks else (low, high)


def plan_cluster(spec: ClusterSpec, region_azs: list[str], account_id: str) -> ClusterPlan:
    spec.validate()
    group = GroupPlan(
        FIRST_GROUP, spec.instance_type, spec.count, spec.capacity_type,
        threads_per_core(spec.instance_type, spec.capacity_type), DEFAULT_EBS_GB,
        deep_health_checks_for(spec.instance_type) if spec.deep_health_checks else (),
        spec.training_plan_arn,
    )
    notes = [] if spec.deep_health_checks else [
        "On-start deep health checks are off: faulty GPUs or links are found by jobs instead."]
    return ClusterPlan(
        spec=spec, vpc=plan_vpc(spec.availability_zone, region_azs),
        kubernetes_version=KUBERNETES_VERSION, group=group, units=CORE_UNITS,
        bucket=shared_bucket(spec.name, account_id, spec.region), notes=notes,
    )


def shared_bucket(cluster: str, account_id: str, region: str) -> str:
    """One bucket per cluster shared by dev environment and pods. S3 names are global and
    <= 63 chars: the account and region stay whole, a long cluster name is cut, and a hash of
    all three keeps names unique."""
    return derived_name(f"podplane-{cluster}", f"{account_id}-{region}", 63, account_id, region)


def _plain(value: Any) -> Any:
    """Tuples become lists so the plan reads the same as its JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
