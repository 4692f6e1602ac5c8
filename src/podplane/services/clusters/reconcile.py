"""cluster.reconcile: put a drifted cluster's dependency units back, as one operation.

The request observes first: nothing drifted answers `changed: false` (no operation, no
mutation); `dry_run` answers the plan in dependency order. Otherwise the workflow runs
observe -> repair -> confirm; each step observes again, so a retried step only fixes what
still differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.effects import Effect
from podplane.domain.errors import CloudError, Conflict, NotFound
from podplane.domain.names import check_cluster_name
from podplane.domain.reconcile import Plan, Step
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services.cloud_access import Cloud, cloud_of, engine_cloud
from podplane.services.clusters import dependencies as cluster_deps
from podplane.services.clusters.reconcile_apply import apply_step
from podplane.services.clusters.reconcile_drift import (
    assess,
    context_of,
    record_drift,
    watched,
)
from podplane.services.context import AppState, Ctx
from podplane.services.operations import Operation, key_used, start_operation
from podplane.services.registry import service
from podplane.store import clusters as repo
from podplane.store.models import ClusterModel

KIND = "cluster.reconcile"
STEPS = ("observe", "repair", "confirm")


@dataclass(frozen=True)
class ReconcileResult:
    """The plan, and the operation that carries it out (None: dry run, or nothing to do)."""

    changed: bool
    plan: Plan
    operation: Operation | None = None

    @property
    def id(self) -> str | None:
        """The operation's id, so the audit line of the request names it."""
        return self.operation.id if self.operation else None


def plan_json(plan: Plan) -> list[dict[str, Any]]:
    return [{"unit": s.key, "kind": s.kind, "action": s.verb, "cause": s.cause,
             "reason": s.reason} for s in plan.steps]


async def _row(app: AppState, name: str) -> ClusterModel:
    check_cluster_name(name)
    async with app.sessions() as db:
        row = await repo.get(db, name)
    if row is None:
        raise NotFound(f"Cluster {name!r} is not managed by podplane.",
                       hint="List clusters (GET /api/v1/clusters).")
    if row.origin != "created":
        raise Conflict(f"Cluster {name!r} was imported: podplane did not install its "
                       "dependencies, so it has no desired state to reconcile to.",
                       hint="Its dependencies are listed in the cluster status.")
    if row.state != "active":
        raise Conflict(f"Cluster {name!r} is {row.state}; only an active cluster is "
                       "reconciled.", hint="Wait for its operation to finish.")
    return row


@service(Effect.READ, "cluster.plan_reconcile")
async def plan_reconcile(ctx: Ctx, name: str) -> ReconcileResult:
    """The dry run: what a reconcile would do now, in dependency order. Changes nothing."""
    found = await assess(cloud_of(ctx.app), await _row(ctx.app, name))
    return ReconcileResult(found.plan.changed, found.plan)


@service(Effect.MUTATE, "cluster.reconcile", target=lambda name, *_a, **_k: f"cluster/{name}")
async def reconcile_cluster(ctx: Ctx, name: str,
                            idempotency_key: str | None = None) -> ReconcileResult:
    row = await _row(ctx.app, name)
    if idempotency_key and await key_used(ctx.app, idempotency_key):  # the same request again
        op = await start_operation(ctx, KIND, f"cluster/{name}", {"name": name},
                                   idempotency_key)
        return ReconcileResult(True, Plan(()), op)
    found = await assess(cloud_of(ctx.app), row)
    await record_drift(ctx.app, name, found.drift)
    if not found.plan.changed:
        return ReconcileResult(False, found.plan)
    op = await start_operation(ctx, KIND, f"cluster/{name}", {"name": name}, idempotency_key)
    return ReconcileResult(True, found.plan, op)


def declare(app: AppState) -> list[Workflow]:
    steps = ReconcileSteps(app)
    return [Workflow.of(KIND, *((n, getattr(steps, n)) for n in STEPS))]


class ReconcileSteps:
    def __init__(self, app: AppState) -> None:
        self.app = app

    @property
    def cloud(self) -> Cloud:
        return engine_cloud(self.app)

    async def _row(self, ctx: StepContext) -> ClusterModel:
        async with self.app.sessions() as db:
            row = await repo.get(db, ctx.params["name"])
        if row is None or not watched(row):
            raise Conflict(f"Cluster {ctx.params['name']!r} is no longer an active cluster "
                           "podplane created.", hint="Read its status.")
        return row

    async def observe(self, ctx: StepContext) -> dict[str, Any]:
        found = await assess(self.cloud, await self._row(ctx))
        await ctx.phase("planned", plan=plan_json(found.plan))
        return {"plan": plan_json(found.plan),
                "left_alone": [{"unit": a.key, "reason": a.reason}
                               for a in found.plan.left_alone]}

    async def repair(self, ctx: StepContext) -> dict[str, Any]:
        row = await self._row(ctx)
        found = await assess(self.cloud, row)
        kube = await self.cloud.kube_for(row.eks_cluster_name)
        done: list[str] = []
        for step in found.plan.steps:
            await ctx.phase("applying", unit=step.key, action=step.verb)
            await apply_step(ctx, self.cloud, kube, context_of(row), step)
            done.append(_line(step))
        return {"repaired": done}

    async def confirm(self, ctx: StepContext) -> dict[str, Any]:
        row = await self._row(ctx)
        await ctx.phase("checking")
        addons = [u.name for u in CORE_UNITS if u.kind == "eks-addon"]
        await cluster_deps.wait_active(ctx, self.cloud, row.eks_cluster_name, addons)
        found = await assess(self.cloud, row)
        await record_drift(self.app, row.name, found.drift)
        if found.drift:
            raise CloudError("Still drifted after the repair: " + "; ".join(
                d.summary() for d in found.drift) + ".", code="drift_remains",
                hint="Something changes these units again (another tool?); read the cluster "
                "status, then retry this step.")
        return {"drift": []}


def _line(step: Step) -> str:
    return f"{step.verb} {step.key} ({step.cause})"
