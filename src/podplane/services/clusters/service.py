"""Clusters: plan, create, list, status, import, delete, and the per-principal current cluster.

Every cluster-scoped call names its cluster; there is no process-global "active cluster".
State comes from the cloud (EKS, HyperPod, Kubernetes); our row keeps identity and origin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from podplane.domain.clusters import ClusterSpec, plan_cluster
from podplane.domain.effects import Effect, Role
from podplane.domain.errors import (
    ConfirmationRequired,
    Conflict,
    InvalidInput,
    NotFound,
)
from podplane.domain.names import check_cluster_name
from podplane.domain.preflight import PreflightReport, check_capacity, raise_if_blocked
from podplane.services.cloud_access import cloud_of
from podplane.services.clusters import create as cluster_create
from podplane.services.clusters import delete as cluster_delete
from podplane.services.clusters import importing as cluster_import
from podplane.services.clusters.inspect import availability_zones, capacity_facts
from podplane.services.clusters.reconcile_drift import DRIFT_FACT
from podplane.services.clusters.state import spec_dict
from podplane.services.clusters.status import ClusterStatus, status_of
from podplane.services.context import Ctx
from podplane.services.operations import (
    Operation,
    get_operation,
    key_used,
    made_by_same_request,
    start_operation,
)
from podplane.services.registry import service
from podplane.store import clusters as repo

CURRENT_CLUSTER = "current-cluster"


@dataclass(frozen=True)
class CreateResult:
    """Either the operation that creates the cluster, or `changed: false` with an empty plan."""

    operation: Operation | None
    changed: bool
    plan: list[Any] = field(default_factory=list)


def _check_region(ctx: Ctx, spec: ClusterSpec) -> None:
    spec.validate()
    if spec.region != ctx.app.settings.region:
        raise InvalidInput(f"This control plane manages {ctx.app.settings.region}, not "
                           f"{spec.region}.", hint="Run a control plane per region (it lives "
                           "in the account and region it manages).", field="region")


async def _preflight(ctx: Ctx, spec: ClusterSpec) -> PreflightReport:
    facts = await capacity_facts(cloud_of(ctx.app), spec.instance_type, spec.availability_zone,
                                 spec.count, spec.training_plan_arn)
    return check_capacity(facts)


async def _plan(ctx: Ctx, spec: ClusterSpec) -> dict[str, Any]:
    cloud = cloud_of(ctx.app)
    azs = [z["name"] for z in await availability_zones(cloud)]
    account = str((await cloud.aws.sts.caller_identity())["Account"])
    return plan_cluster(spec, azs, account).describe()


@service(Effect.READ, "cluster.plan_create")
async def plan_create(ctx: Ctx, spec: ClusterSpec) -> dict[str, Any]:
    """What a create would do (dry run): the derived plan and the pre-flight findings."""
    _check_region(ctx, spec)
    described = await _plan(ctx, spec)
    report = await _preflight(ctx, spec)
    described["preflight"] = [f.__dict__ for f in report.findings]
    described["blocked"] = bool(report.blocking)
    described["availability_zone"] = report.adopted_az or spec.availability_zone
    async with ctx.app.sessions() as db:
        row = await repo.get(db, spec.name)
    described["exists"] = row is not None
    return described


@service(Effect.CREATE, "cluster.create", target=lambda spec, *_a, **_k: f"cluster/{spec.name}")
async def create_cluster(ctx: Ctx, spec: ClusterSpec, override_warnings: list[str] | None = None,
                         idempotency_key: str | None = None) -> CreateResult:
    _check_region(ctx, spec)
    params = {"spec": spec_dict(spec), "override_warnings": sorted(override_warnings or [])}
    target = f"cluster/{spec.name}"
    if idempotency_key and await key_used(ctx.app, idempotency_key):
        op = await start_operation(ctx, cluster_create.KIND, target, params, idempotency_key)
        return CreateResult(op, True)
    async with ctx.app.sessions() as db:
        row = await repo.get(db, spec.name)
    if row is not None and row.state == "active":
        if row.spec == spec_dict(spec) or row.origin == "imported":
            return CreateResult(None, False, [])
        raise Conflict(f"Cluster {spec.name!r} exists with a different spec.",
                       hint="Change instance groups through /instance-groups; a cluster's "
                       "name, region and first group are fixed once created.")
    if row is None and await cloud_of(ctx.app).aws.eks.describe_cluster(spec.name):
        raise Conflict(f"An EKS cluster named {spec.name!r} already exists in the account.",
                       hint="Import it (POST /api/v1/clusters/import) or pick another name.")
    raise_if_blocked(await _preflight(ctx, spec), set(params["override_warnings"]))

    async def register(db: AsyncSession, op_id: str) -> None:
        # In the operation's own transaction: a refused start (busy, key reused) writes no
        # row and resets no facts of a creation that is running.
        await repo.upsert(db, spec.name, region=spec.region, eks_cluster_name=spec.name,
                          hyperpod_cluster_name=None, origin="created", state="creating",
                          spec=spec_dict(spec), facts={}, operation_id=op_id)

    op = await start_operation(ctx, cluster_create.KIND, target, params, idempotency_key,
                               also=register)
    return CreateResult(op, True, [])


@service(Effect.READ, "cluster.list")
async def list_clusters(ctx: Ctx) -> dict[str, Any]:
    """Clusters we manage, and every EKS / HyperPod cluster that exists in the account."""
    cloud = cloud_of(ctx.app)
    async with ctx.app.sessions() as db:
        rows = await repo.all_clusters(db)
    managed = {r.name for r in rows}
    eks = [{"name": n, "status": (await cloud.aws.eks.describe_cluster(n) or {}).get("status"),
            "managed": n in {r.eks_cluster_name for r in rows}}
           for n in await cloud.aws.eks.list_clusters()]
    hyperpod = [{"name": c["ClusterName"], "status": c["ClusterStatus"], "arn": c["ClusterArn"],
                 "managed": c["ClusterName"] in {r.hyperpod_cluster_name for r in rows}}
                for c in await cloud.aws.hyperpod.list_clusters()]
    return {"managed": [{"name": r.name, "region": r.region, "origin": r.origin,
                         "state": _listed_state(r), "eks_cluster_name": r.eks_cluster_name,
                         "hyperpod_cluster_name": r.hyperpod_cluster_name,
                         "operation_id": r.operation_id} for r in rows],
            "account": {"eks": eks, "hyperpod": hyperpod},
            "unmanaged_eks": sorted(e["name"] for e in eks if e["name"] not in managed)}


def _listed_state(row: Any) -> str:
    """The list reads no cloud per cluster: an active cluster with drift on record (the drift
    watch keeps it in the row) is listed degraded, like its status page says."""
    drifted = ((row.facts or {}).get(DRIFT_FACT) or {}).get("units")
    return "degraded" if row.state == "active" and drifted else str(row.state)


@service(Effect.READ, "cluster.get")
async def get_cluster(ctx: Ctx, name: str) -> ClusterStatus:
    check_cluster_name(name)
    async with ctx.app.sessions() as db:
        row = await repo.get(db, name)
    if row is None:
        raise NotFound(f"Cluster {name!r} is not managed by podplane.",
                       hint="List clusters (GET /api/v1/clusters); import one that exists in "
                       "the account with POST /api/v1/clusters/import.")
    op = await get_operation(ctx, row.operation_id, False) if row.operation_id else None
    return await status_of(cloud_of(ctx.app), row, op, ctx.app)


# Import puts an account's existing cluster under podplane's hands (and a later delete of it):
# the admin decides that.
@service(Effect.CREATE, "cluster.import", target=lambda name, *_a, **_k: f"cluster/{name}",
         min_role=Role.ADMIN)
async def import_cluster(ctx: Ctx, name: str, eks_cluster_name: str | None = None,
                         hyperpod_cluster_name: str | None = None,
                         idempotency_key: str | None = None) -> CreateResult:
    """The import's operation, or `changed: false` when this same import made the cluster
    podplane manages under that name (issue 31)."""
    check_cluster_name(name)
    target = f"cluster/{name}"
    params = {"name": name, "eks_cluster_name": eks_cluster_name or name,
              "hyperpod_cluster_name": hyperpod_cluster_name}
    if idempotency_key and await key_used(ctx.app, idempotency_key):
        return CreateResult(await start_operation(ctx, cluster_import.KIND, target, params,
                                                  idempotency_key), True)
    async with ctx.app.sessions() as db:
        row = await repo.get(db, name)
    if row is not None:
        if row.origin == "imported" and await made_by_same_request(
                ctx.app, cluster_import.KIND, target, None, params):
            return CreateResult(None, False, [])
        raise Conflict(f"Cluster {name!r} is already managed.", hint="Pick another name.")
    return CreateResult(await start_operation(ctx, cluster_import.KIND, target, params,
                                              idempotency_key), True)


@service(Effect.DESTROY, "cluster.delete", target=lambda name, *_a, **_k: f"cluster/{name}")
async def delete_cluster(ctx: Ctx, name: str, force: bool = False,
                         delete_resources: bool | None = None,
                         idempotency_key: str | None = None, *, confirm: bool = False
                         ) -> Operation:
    """Ordered teardown. Imported clusters are detached unless delete_resources is true."""
    check_cluster_name(name)
    async with ctx.app.sessions() as db:
        row = await repo.get(db, name)
    if row is None:
        raise NotFound(f"Cluster {name!r} is not managed by podplane.")
    remove = row.origin == "created" if delete_resources is None else delete_resources
    if not confirm:
        what = "deletes its cloud resources" if remove else "detaches it (cloud resources stay)"
        raise ConfirmationRequired(f"Deleting cluster {name!r} {what}.",
                                   hint="Send confirm=true once the user agreed.")
    params = {"name": name, "force": force, "delete_resources": remove,
              "eks_cluster_name": row.eks_cluster_name,
              "hyperpod_cluster_name": row.hyperpod_cluster_name}

    async def mark(db: AsyncSession, op_id: str) -> None:  # in the operation's transaction
        await repo.upsert(db, name, state="deleting", operation_id=op_id)

    return await start_operation(ctx, cluster_delete.KIND, f"cluster/{name}", params,
                                 idempotency_key, also=mark)


@service(Effect.READ, "preference.current_cluster.get")
async def get_current_cluster(ctx: Ctx) -> str | None:
    async with ctx.app.sessions() as db:
        return await repo.preference(db, ctx.principal.name, CURRENT_CLUSTER)


# Reads-only effect on purpose: it changes the caller's own view, never the cloud or others.
@service(Effect.READ, "preference.current_cluster.set")
async def set_current_cluster(ctx: Ctx, name: str | None) -> str | None:
    if name is not None:
        check_cluster_name(name)
        async with ctx.app.sessions() as db:
            if await repo.get(db, name) is None:
                raise NotFound(f"Cluster {name!r} is not managed by podplane.")
    async with ctx.app.sessions.begin() as db:
        await repo.set_preference(db, ctx.principal.name, CURRENT_CLUSTER, name)
    return name
