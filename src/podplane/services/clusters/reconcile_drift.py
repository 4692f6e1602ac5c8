"""A cluster's drift: assess desired vs observed, and record a drift once when it begins.

Drift is recorded as an audit line (principal `system`, action `cluster.drift_detected` /
`cluster.drift_resolved`), not a new table: the audit log is already the durable, paged,
filterable event list every face reads (GET /api/v1/audit, the console's Audit page), and a
drift is an event about a target like the mutations there. The cluster row's facts keep
`drift` = {since, units} so "since when" survives restarts and a second observation of the same
drift records nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from weakref import WeakKeyDictionary

from podplane.domain import reconcile as core
from podplane.domain.principal import SYSTEM
from podplane.domain.reconcile import Desired, Observed, Plan, UnitDiff
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.reconcile_units import Context, desired_for, observe_units
from podplane.services.context import AppState
from podplane.store import audit_log
from podplane.store import clusters as repo
from podplane.store.models import ClusterModel

DRIFT_FACT = "drift"
DETECTED = "cluster.drift_detected"
RESOLVED = "cluster.drift_resolved"


@dataclass(frozen=True)
class Assessment:
    """One observation of a cluster's units: the diff and the plan that repairs it."""

    desired: list[Desired]
    observed: dict[str, Observed]
    drift: list[UnitDiff]
    plan: Plan


def context_of(row: ClusterModel) -> Context:
    return Context(row.eks_cluster_name, row.region, (row.facts or {}).get("bucket"))


def watched(row: ClusterModel) -> bool:
    """Drift is a state of clusters podplane built: it knows what they should run. An imported
    cluster's dependencies were someone else's choice, so they are shown, not judged."""
    return row.origin == "created" and row.state == "active"


async def assess(cloud: Cloud, row: ClusterModel) -> Assessment:
    target = context_of(row)
    desired = await desired_for(cloud, target)
    observed = await observe_units(cloud, target, desired)
    return Assessment(desired, observed, core.diff(desired, observed),
                      core.plan(desired, observed))


_RECORDING: WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = WeakKeyDictionary()


def _recording() -> asyncio.Lock:
    """One lock per event loop (an asyncio lock must not cross loops)."""
    return _RECORDING.setdefault(asyncio.get_running_loop(), asyncio.Lock())


def now_of(app: AppState) -> datetime:
    return app.ops_clock.now() if app.ops_clock is not None else datetime.now(UTC)


async def record_drift(app: AppState, name: str, drift: list[UnitDiff]) -> str | None:
    """Store and audit a change of drift (begun, different units, ended); an observation
    that finds what the row already holds writes nothing. Returns since when (ISO)."""
    keys = sorted(d.key for d in drift)
    # Two watchers (the background one, a replica, a test's own) may observe at once: the
    # compare-and-write must be one step, or both would record the same drift.
    async with _recording(), app.sessions.begin() as db:
        row = await repo.get(db, name, for_update=True)
        if row is None:
            return None
        held: dict[str, Any] = (row.facts or {}).get(DRIFT_FACT) or {}
        if keys == held.get("units", []):
            return held.get("since")
        facts = {k: v for k, v in (row.facts or {}).items() if k != DRIFT_FACT}
        since = held.get("since") or now_of(app).isoformat()
        if keys:
            facts[DRIFT_FACT] = {"since": since, "units": keys}
        await repo.upsert(db, name, facts=facts)
        await audit_log.append(
            db, principal=SYSTEM, action=DETECTED if keys else RESOLVED,
            target=f"cluster/{name}", result="degraded" if keys else "active",
            detail={"units": [_event(d) for d in drift]} if keys else {"since": since})
        return since if keys else None


def _event(d: UnitDiff) -> dict[str, Any]:
    return {"unit": d.key, "kind": d.kind, "state": d.state, "summary": d.summary(),
            "dependants": list(d.dependants)}
