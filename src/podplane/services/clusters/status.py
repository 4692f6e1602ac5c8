"""A cluster's status as the cloud reports it (source of truth), with its last operation.

An active cluster podplane created whose dependency units depart from what it installed is
`degraded`, with each drifted unit, what depends on it and since when (reconcile_drift).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.errors import PodplaneError
from podplane.domain.reconcile import UnitDiff
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.reconcile_drift import (
    Assessment,
    assess,
    record_drift,
    watched,
)
from podplane.services.context import AppState
from podplane.services.operations import Operation
from podplane.store.models import ClusterModel


@dataclass(frozen=True)
class EksStatus:
    name: str
    status: str | None
    version: str | None
    arn: str | None


@dataclass(frozen=True)
class HyperPodGroupStatus:
    name: str
    instance_type: str
    target: int | None
    current: int | None
    status: str | None
    deep_health_checks: list[str]


@dataclass(frozen=True)
class HyperPodStatus:
    name: str
    status: str | None
    arn: str | None
    node_recovery: str | None
    node_provisioning_mode: str | None
    failure_message: str | None
    instance_groups: list[HyperPodGroupStatus]


@dataclass(frozen=True)
class DependencyStatus:
    kind: str
    installed: bool
    version: str | None
    healthy: bool | None


@dataclass(frozen=True)
class UnknownDependencies:
    """The units could not be read (the Kubernetes API is unreachable): why."""

    error: dict[str, str]


@dataclass(frozen=True)
class FieldChange:
    field: str
    desired: Any
    observed: Any


@dataclass(frozen=True)
class DriftedUnit:
    unit: str
    kind: str
    state: str                  # missing | changed | unhealthy
    summary: str
    dependants: list[str]       # everything that needs this unit, directly or not
    fields: list[FieldChange] = field(default_factory=list)


@dataclass(frozen=True)
class Drift:
    since: str | None           # when an observation first found this drift (ISO)
    units: list[DriftedUnit]


@dataclass(frozen=True)
class StepSummary:
    name: str
    status: str
    phase: str | None
    error: dict[str, Any] | None


@dataclass(frozen=True)
class OperationSummary:
    id: str
    kind: str
    status: str
    steps: list[StepSummary]


@dataclass(frozen=True)
class ClusterStatus:
    name: str
    region: str
    origin: str
    state: str                  # creating | active | degraded | deleting | failed
    spec: dict[str, Any] | None
    eks: EksStatus
    hyperpod: HyperPodStatus | None
    addons: dict[str, str]
    dependencies: dict[str, DependencyStatus] | UnknownDependencies | None
    facts: dict[str, Any]
    detected: dict[str, Any] | None
    operation: OperationSummary | None
    drift: Drift | None = None


async def status_of(cloud: Cloud, row: ClusterModel, op: Operation | None,
                    app: AppState | None = None) -> ClusterStatus:
    """With `app`, a drift found here is recorded (once: reconcile_drift.record_drift)."""
    eks = await cloud.aws.eks.describe_cluster(row.eks_cluster_name) or {}
    hp = (await cloud.aws.hyperpod.describe_cluster(row.hyperpod_cluster_name)
          if row.hyperpod_cluster_name else None) or {}
    found: Assessment | UnknownDependencies | None = None
    if eks.get("status") == "ACTIVE":
        found = await _assess(cloud, row)
    drift = await _drift(app, row, found) if isinstance(found, Assessment) else None
    state = _state(row.state, op)
    return ClusterStatus(
        name=row.name, region=row.region, origin=row.origin,
        state="degraded" if drift and state == "active" else state, spec=row.spec,
        eks=EksStatus(row.eks_cluster_name, eks.get("status"), eks.get("version"),
                      eks.get("arn")),
        hyperpod=_hyperpod(row.hyperpod_cluster_name, hp),
        addons=(_addons(found) if isinstance(found, Assessment)
                else await _addon_statuses(cloud, row.eks_cluster_name) if found else {}),
        dependencies=_dependencies(found) if isinstance(found, Assessment) else found,
        facts={k: v for k, v in (row.facts or {}).items() if k not in ("detected", "drift")},
        detected=(row.facts or {}).get("detected"), operation=_op(op), drift=drift)


async def _assess(cloud: Cloud, row: ClusterModel) -> Assessment | UnknownDependencies:
    try:
        return await assess(cloud, row)
    except PodplaneError as err:
        return UnknownDependencies({"code": err.code, "message": err.message})


async def _drift(app: AppState | None, row: ClusterModel, found: Assessment) -> Drift | None:
    if not watched(row) or not found.drift:
        if app is not None and watched(row):
            await record_drift(app, row.name, [])
        return None
    since = (await record_drift(app, row.name, found.drift) if app is not None
             else ((row.facts or {}).get("drift") or {}).get("since"))
    return Drift(since, [_unit(d) for d in found.drift])


def _unit(d: UnitDiff) -> DriftedUnit:
    return DriftedUnit(d.key, d.kind, d.state, d.summary(), list(d.dependants),
                       [FieldChange(f.field, f.desired, f.observed) for f in d.fields])


def _addons(found: Assessment) -> dict[str, str]:
    """Each EKS add-on of the cluster's units -> its status (MISSING when absent)."""
    return {u.name: str((found.observed[u.name].fields.get("status") or "MISSING")
                        if u.name in found.observed else "MISSING")
            for u in CORE_UNITS if u.kind == "eks-addon"}


async def _addon_statuses(cloud: Cloud, eks_name: str) -> dict[str, str]:
    """The add-ons' statuses from EKS alone, when the Kubernetes API could not be read."""
    out = {}
    for unit in CORE_UNITS:
        if unit.kind == "eks-addon":
            found = await cloud.aws.eks.describe_addon(eks_name, unit.name)
            out[unit.name] = str((found or {}).get("status", "MISSING"))
    return out


def _dependencies(found: Assessment) -> dict[str, DependencyStatus]:
    """Each dependency unit: kind, installed version, healthy."""
    out = {}
    for unit in CORE_UNITS:
        seen = found.observed.get(unit.name)
        version = seen.fields.get("version") if seen else None
        out[unit.name] = DependencyStatus(unit.kind, seen is not None,
                                          None if version is None else str(version),
                                          seen.healthy if seen else None)
    return out


def _state(stored: str, op: Operation | None) -> str:
    """A create or delete that ended in failure shows as failed until someone retries it."""
    if stored in ("creating", "deleting") and op is not None and op.status == "failed":
        return "failed"
    return stored


def _hyperpod(name: str | None, hp: dict[str, Any]) -> HyperPodStatus | None:
    if not name:
        return None
    groups = [HyperPodGroupStatus(g["InstanceGroupName"], g["InstanceType"],
                                  g.get("TargetCount"), g.get("CurrentCount"), g.get("Status"),
                                  g.get("OnStartDeepHealthChecks", []))
              for g in hp.get("InstanceGroups", [])]
    return HyperPodStatus(name, hp.get("ClusterStatus"), hp.get("ClusterArn"),
                          hp.get("NodeRecovery"), hp.get("NodeProvisioningMode"),
                          hp.get("FailureMessage"), groups)


def _op(op: Operation | None) -> OperationSummary | None:
    if op is None:
        return None
    return OperationSummary(op.id, op.kind, op.status,
                            [StepSummary(s.name, s.status, s.phase, s.error) for s in op.steps])
