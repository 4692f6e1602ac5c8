"""Diagnose an operation: why it failed or what it waits on, from the engine's own record
(steps, their classified errors and history), judged by domain/diagnostics/operation.py.
For an operation on a cluster, the cloud's own records too: HyperPod's cluster events and,
when an add-on step failed, each EKS add-on's health issues (DescribeAddon).

Read-only (a viewer may run it); the retry it suggests is a tool call it never makes.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from podplane.domain.diagnostics.operation import OperationFacts, diagnose
from podplane.domain.diagnostics.verdict import Verdict
from podplane.domain.effects import Effect
from podplane.domain.errors import CloudError
from podplane.services import operations
from podplane.services.access import authority
from podplane.services.cloud_access import Cloud, cloud_of
from podplane.services.context import Ctx
from podplane.services.diagnostics.node import cluster_events
from podplane.services.registry import service
from podplane.store import clusters as cluster_rows

ADDON_CODES = ("addon_failed", "addon_timeout")
ADDON_STEPS = ("dependencies", "node_dependencies")


@service(Effect.READ, "diagnose.operation")
async def diagnose_operation(ctx: Ctx, op_id: str) -> Verdict:
    op = await operations.engine_of(ctx.app).read(op_id, history=True)
    destroys = (await authority.of_operation(ctx, op_id, op.kind)).destroys
    steps = tuple(asdict(s) for s in op.steps)
    facts = OperationFacts(op.id, op.kind, op.target, op.status, steps, destroys,
                           op.cancel_requested)
    parts = op.target.split("/")
    if op.status != "succeeded" and len(parts) == 2 and parts[0] == "cluster":
        facts = await _with_cloud(ctx, facts, parts[1])
    return diagnose(facts)


async def _with_cloud(ctx: Ctx, facts: OperationFacts, name: str) -> OperationFacts:
    """The cluster's events and, for a failed add-on step, its add-ons; what cannot be read
    becomes a note, never a failed diagnosis."""
    async with ctx.app.sessions() as db:
        row = await cluster_rows.get(db, name)
    if row is None:
        return facts
    cloud = cloud_of(ctx.app)
    events: list[dict[str, Any]] = []
    notes: tuple[str, ...] = ()
    addons: list[dict[str, Any]] = []
    # a create names its HyperPod cluster after the cluster (services/clusters/hyperpod.py)
    # and records the name only once that step succeeds
    hyperpod = row.hyperpod_cluster_name or (name if row.origin == "created" else None)
    try:
        described = await cloud.aws.hyperpod.describe_cluster(hyperpod) if hyperpod else None
        if described:
            events, notes = await cluster_events(cloud.aws.hyperpod, described)
        if _addon_step_failed(facts.steps):
            addons = await _addons(cloud, row.eks_cluster_name)
    except CloudError as err:
        notes += (f"The cloud's records could not all be read: {err.message}",)
    return replace(facts, cluster_events=tuple(events), addons=tuple(addons), notes=notes)


def _addon_step_failed(steps: tuple[dict[str, Any], ...]) -> bool:
    return any(s.get("status") == "failed" and (
        s.get("name") in ADDON_STEPS or (s.get("error") or {}).get("code") in ADDON_CODES)
        for s in steps)


async def _addons(cloud: Cloud, eks_name: str) -> list[dict[str, Any]]:
    names = await cloud.aws.eks.list_addons(eks_name)
    found = [await cloud.aws.eks.describe_addon(eks_name, n) for n in names]
    return [a for a in found if a]
