"""What the cluster and inspect endpoints answer, field by field (the console's types are
generated from these). The services build these bodies; the routes answer them with
`exclude_unset`, so a field the service left out stays out and the JSON is the service's own."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from podplane.api.derived import fields_of
from podplane.domain.clusters import ClusterSpec
from podplane.domain.preflight import Finding
from podplane.services.clusters import inspect
from podplane.services.clusters import status as st


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


class EksStatusOut(fields_of(st.EksStatus)):  # type: ignore[misc]
    pass

class HyperPodGroupStatusOut(fields_of(st.HyperPodGroupStatus)):  # type: ignore[misc]
    pass

class HyperPodStatusOut(fields_of(st.HyperPodStatus,  # type: ignore[misc]
                                  instance_groups=list[HyperPodGroupStatusOut])):
    pass

class DependencyOut(fields_of(st.DependencyStatus, healthy=(bool | None, Field(  # type: ignore[misc]
        description="None when the Kubernetes API was unreachable.")))):
    pass

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


class OperationStepSummaryOut(fields_of(st.StepSummary,  # type: ignore[misc]
                                        error=UnitErrorOut | None)):
    pass

class OperationSummaryOut(fields_of(st.OperationSummary,  # type: ignore[misc]
                                    steps=list[OperationStepSummaryOut])):
    pass

Scalar = str | int | bool | None


class FieldChangeOut(fields_of(st.FieldChange, desired=Scalar, observed=Scalar)):  # type: ignore[misc]
    pass

class DriftedUnitOut(fields_of(  # type: ignore[misc]
        st.DriftedUnit,
        kind=(str, Field(description="eks-addon | manifest | iam-role | "
                         "pod-identity-association | storage")),
        state=(str, Field(description="missing | changed | unhealthy")),
        dependants=(list[str], Field(description="Every unit that needs this one, directly "
                                     "or through others, in dependency order.")),
        fields=(list[FieldChangeOut], ...))):
    pass

class DriftOut(fields_of(st.Drift, since=(str | None, Field(  # type: ignore[misc]
        description="When an observation first found this drift (ISO).")),
        units=list[DriftedUnitOut])):
    pass

class ClusterStatusOut(fields_of(  # type: ignore[misc]
        st.ClusterStatus,
        state=(str, Field(description="creating | active | degraded (an active cluster whose "
                          "dependency units drifted: see `drift`) | deleting | failed")),
        spec=ClusterSpec | NoSpec | None, eks=EksStatusOut, hyperpod=HyperPodStatusOut | None,
        addons=(dict[str, str], Field(description="EKS add-on name -> its status.")),
        dependencies=dict[str, DependencyOut] | DependenciesUnknownOut | None,
        facts=ClusterFactsOut, detected=DetectedOut | None,
        operation=OperationSummaryOut | None,
        drift=(DriftOut | None, Field(None, description="Drifted dependency units of a "
                                      "degraded cluster; POST /clusters/{c}/reconcile puts "
                                      "them back.")))):
    pass

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

class ZoneOut(fields_of(inspect.Zone)):  # type: ignore[misc]
    pass

class InstanceTypeOut(fields_of(  # type: ignore[misc]
        inspect.InstanceType,
        gpu_memory_gib=(int, Field(description="Per GPU.")),
        price_per_hour=(float, Field(description="Approximate on-demand USD, for "
                                     "orientation.")))):
    pass

class QuotaOut(fields_of(inspect.Quota)):  # type: ignore[misc]
    pass

class TrainingPlanOut(fields_of(inspect.TrainingPlan)):  # type: ignore[misc]
    pass
