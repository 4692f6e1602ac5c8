"""A cluster's status as the cloud reports it (source of truth), with its last operation."""

from __future__ import annotations

from typing import Any

from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.errors import PodplaneError
from podplane.services.cloud_access import Cloud
from podplane.services.clusters import dependencies as cluster_deps
from podplane.services.operations import Operation
from podplane.store.models import ClusterModel


async def status_of(cloud: Cloud, row: ClusterModel, op: Operation | None) -> dict[str, Any]:
    eks = await cloud.aws.eks.describe_cluster(row.eks_cluster_name) or {}
    hp = (await cloud.aws.hyperpod.describe_cluster(row.hyperpod_cluster_name)
          if row.hyperpod_cluster_name else None) or {}
    addons: dict[str, str] = {}
    dependencies: dict[str, Any] | None = None
    if eks.get("status") == "ACTIVE":
        for unit in CORE_UNITS:
            if unit.kind == "eks-addon":
                found = await cloud.aws.eks.describe_addon(row.eks_cluster_name, unit.name)
                addons[unit.name] = (found or {}).get("status", "MISSING")
        dependencies = await _dependencies(cloud, row.eks_cluster_name)
    return {
        "name": row.name, "region": row.region, "origin": row.origin,
        "state": _state(row.state, op),
        "spec": row.spec, "eks": {"name": row.eks_cluster_name, "status": eks.get("status"),
                                  "version": eks.get("version"), "arn": eks.get("arn")},
        "hyperpod": _hyperpod(row.hyperpod_cluster_name, hp), "addons": addons,
        "dependencies": dependencies,
        "facts": {k: v for k, v in (row.facts or {}).items() if k != "detected"},
        "detected": (row.facts or {}).get("detected"),
        "operation": _op(op),
    }


async def _dependencies(cloud: Cloud, eks_name: str) -> dict[str, Any]:
    """Each dependency unit: kind, installed version, healthy (None if the API is unreachable)."""
    try:
        seen = await cluster_deps.observe(cloud, eks_name)
    except PodplaneError as err:
        return {"error": {"code": err.code, "message": err.message}}
    return {u.name: {"kind": u.kind, "installed": u.name in seen,
                     "version": seen[u.name].version if u.name in seen else None,
                     "healthy": seen[u.name].healthy if u.name in seen else None}
            for u in CORE_UNITS}


def _state(stored: str, op: Operation | None) -> str:
    """A create or delete that ended in failure shows as failed until someone retries it."""
    if stored in ("creating", "deleting") and op is not None and op.status == "failed":
        return "failed"
    return stored


def _hyperpod(name: str | None, hp: dict[str, Any]) -> dict[str, Any] | None:
    if not name:
        return None
    groups = [{"name": g["InstanceGroupName"], "instance_type": g["InstanceType"],
               "target": g.get("TargetCount"), "current": g.get("CurrentCount"),
               "status": g.get("Status"),
               "deep_health_checks": g.get("OnStartDeepHealthChecks", [])}
              for g in hp.get("InstanceGroups", [])]
    return {"name": name, "status": hp.get("ClusterStatus"), "arn": hp.get("ClusterArn"),
            "node_recovery": hp.get("NodeRecovery"),
            "node_provisioning_mode": hp.get("NodeProvisioningMode"),
            "failure_message": hp.get("FailureMessage"), "instance_groups": groups}


def _op(op: Operation | None) -> dict[str, Any] | None:
    if op is None:
        return None
    return {"id": op.id, "kind": op.kind, "status": op.status,
            "steps": [{"name": s.name, "status": s.status, "phase": s.phase,
                       "error": s.error} for s in op.steps]}

