"""What the cluster and inspect endpoints answer, field by field (the console's types are
generated from these). The services build these bodies; the routes answer them with
`exclude_unset`, so a field the service left out stays out and the JSON is the service's own."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from podplane.domain.clusters import ClusterSpec
from podplane.domain.preflight import Finding


class Shape(BaseModel):
    # A response shape never refuses an extra key the service adds later: it drops it, and the
    # OpenAPI test keeps the declaration honest.
    model_config = ConfigDict(extra="ignore")


# --- list ------------------------------------------------------------------------------------

class ManagedClusterOut(Shape):
    name: str
    region: str
    origin: str = Field(description="created | imported")
    state: str
    eks_cluster_name: str
    hyperpod_cluster_name: str | None
    operation_id: str | None


class AccountEksClusterOut(Shape):
    name: str
    status: str | None
    managed: bool


class AccountHyperPodClusterOut(Shape):
    name: str
    status: str
    arn: str
    managed: bool


class AccountClustersOut(Shape):
    eks: list[AccountEksClusterOut]
    hyperpod: list[AccountHyperPodClusterOut]


class ClusterListOut(Shape):
    managed: list[ManagedClusterOut]
    account: AccountClustersOut
    unmanaged_eks: list[str]


# --- status ----------------------------------------------------------------------------------

class NoSpec(Shape):
    """An imported cluster: podplane did not make the decisions, so none are stored."""

    model_config = ConfigDict(extra="forbid")


class EksStatusOut(Shape):
    name: str
    status: str | None
    version: str | None
    arn: str | None


class HyperPodGroupStatusOut(Shape):
    name: str
    instance_type: str
    target: int | None
    current: int | None
    status: str | None
    deep_health_checks: list[str]


class HyperPodStatusOut(Shape):
    name: str
    status: str | None
    arn: str | None
    node_recovery: str | None
    node_provisioning_mode: str | None
    failure_message: str | None
    instance_groups: list[HyperPodGroupStatusOut]


class DependencyOut(Shape):
    kind: str
    installed: bool
    version: str | None
    healthy: bool | None = Field(description="None when the Kubernetes API was unreachable.")


class UnitErrorOut(Shape):
    code: str
    message: str
    hint: str | None = None


class DependenciesUnknownOut(Shape):
    """The Kubernetes API could not be read: why."""

    model_config = ConfigDict(extra="forbid")
    error: UnitErrorOut


class NetworkFactsOut(Shape):
    vpc_id: str
    vpc_cidr: str
    public_subnets: list[str]
    private_subnets: list[str]
    compute_subnet: str
    compute_az: str
    internet_gateway: str
    nat_gateway: str
    route_tables: list[str]
    s3_endpoint: str
    security_group: str


class ClusterFactsOut(Shape):
    """What the create found or made, step by step (absent until its step ran)."""

    availability_zone: str | None = None
    network: NetworkFactsOut | None = None
    eks_arn: str | None = None
    hyperpod_role: str | None = None
    bucket: str | None = None
    lifecycle_uri: str | None = None


class DetectedUnitOut(Shape):
    installed: bool
    version: str | None = None
    healthy: bool | None = None


class DetectedHyperPodOut(Shape):
    status: str | None
    node_recovery: str | None
    instance_groups: list[str]


class DetectedOut(Shape):
    """What an import found in the cluster."""

    dependencies: dict[str, DetectedUnitOut]
    operators: dict[str, bool]
    hyperpod: DetectedHyperPodOut | None


class OperationStepSummaryOut(Shape):
    name: str
    status: str
    phase: str | None
    error: UnitErrorOut | None


class OperationSummaryOut(Shape):
    id: str
    kind: str
    status: str
    steps: list[OperationStepSummaryOut]


class FieldChangeOut(Shape):
    field: str
    desired: str | int | bool | None
    observed: str | int | bool | None


class DriftedUnitOut(Shape):
    unit: str
    kind: str = Field(description="eks-addon | manifest | iam-role | pod-identity-association "
                      "| storage")
    state: str = Field(description="missing | changed | unhealthy")
    summary: str
    dependants: list[str] = Field(description="Every unit that needs this one, directly or "
                                  "through others, in dependency order.")
    fields: list[FieldChangeOut]


class DriftOut(Shape):
    since: str | None = Field(description="When an observation first found this drift (ISO).")
    units: list[DriftedUnitOut]


class ClusterStatusOut(Shape):
    name: str
    region: str
    origin: str
    state: str = Field(description="creating | active | degraded (an active cluster whose "
                       "dependency units drifted: see `drift`) | deleting | failed")
    spec: ClusterSpec | NoSpec | None
    eks: EksStatusOut
    hyperpod: HyperPodStatusOut | None
    addons: dict[str, str] = Field(description="EKS add-on name -> its status.")
    dependencies: dict[str, DependencyOut] | DependenciesUnknownOut | None
    facts: ClusterFactsOut
    detected: DetectedOut | None
    operation: OperationSummaryOut | None
    drift: DriftOut | None = Field(None, description="Drifted dependency units of a degraded "
                                   "cluster; POST /clusters/{c}/reconcile puts them back.")


# --- reconcile -------------------------------------------------------------------------------

class ReconcileStepOut(Shape):
    unit: str
    kind: str
    action: str = Field(description="create | update | delete")
    cause: str = Field(description="missing | changed | unhealthy | unwanted")
    reason: str


class LeftAloneOut(Shape):
    unit: str
    kind: str
    reason: str


class ReconcilePlanOut(Shape):
    """What a reconcile does (dry_run) or did not need to do (changed: false)."""

    changed: bool
    plan: list[ReconcileStepOut] = Field(description="In dependency order.")
    left_alone: list[LeftAloneOut] = Field(description="Units podplane did not create and so "
                                           "does not change or delete.")


# --- plan ------------------------------------------------------------------------------------

# A pair as a two-item list: TypeScript generators read arrays more reliably than tuples.
AzCidr = Annotated[list[str], Field(min_length=2, max_length=2)]


class NetworkPlanOut(Shape):
    vpc_cidr: str
    public: list[AzCidr] = Field(description="[AZ, CIDR] of each public subnet.")
    private: list[AzCidr] = Field(description="[AZ, CIDR] of each private subnet.")
    compute: AzCidr = Field(description="[AZ, CIDR] of the /20 compute subnet.")


class GroupPlanOut(Shape):
    name: str
    instance_type: str
    count: int
    capacity_type: str
    threads_per_core: int
    ebs_gb: int
    deep_health_checks: list[str]
    training_plan_arn: str | None


class PlannedUnitOut(Shape):
    name: str
    kind: str
    version: str


class StoragePlanOut(Shape):
    bucket: str
    mount: str


class ClusterPlanOut(Shape):
    cluster: str
    region: str
    kubernetes_version: str
    steps: list[str]
    network: NetworkPlanOut
    instance_group: GroupPlanOut
    node_recovery: str
    node_provisioning_mode: str
    dependencies: list[PlannedUnitOut]
    storage: StoragePlanOut
    notes: list[str]
    eta_minutes: Annotated[list[int], Field(min_length=2, max_length=2)] = Field(
        description="[low, high] estimate on AWS.")
    preflight: list[Finding]
    blocked: bool
    availability_zone: str
    exists: bool


class UnchangedOut(Shape):
    changed: bool = False
    plan: list[str] = Field(default_factory=list, description="Always empty: nothing to do.")


# --- inspect ---------------------------------------------------------------------------------

class ZoneOut(Shape):
    name: str
    id: str
    state: str
    region: str


class InstanceTypeOut(Shape):
    name: str
    vcpu: int
    memory_gib: int
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gib: int = Field(description="Per GPU.")
    efa_interfaces: int
    price_per_hour: float = Field(description="Approximate on-demand USD, for orientation.")
    accelerated: bool
    offered_in: list[str]


class QuotaOut(Shape):
    instance_type: str
    quota_name: str
    limit: int | None
    in_use: int
    source: str | None
    available: int | None


class TrainingPlanOut(Shape):
    arn: str
    name: str | None
    status: str | None
    instance_type: str | None
    availability_zone: str | None
    total_instances: int | None
    available_instances: int | None
    start_time: str | None
    end_time: str | None
