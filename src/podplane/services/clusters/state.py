"""The cluster row (identity, origin, facts) and the spec as operations carry it."""

from __future__ import annotations

from typing import Any

from podplane.domain.clusters import ClusterSpec
from podplane.domain.instance_groups import CapacityType
from podplane.services.context import AppState
from podplane.store import clusters as repo


def spec_from(data: dict[str, Any]) -> ClusterSpec:
    return ClusterSpec(
        name=data["name"], region=data["region"], availability_zone=data["availability_zone"],
        instance_type=data["instance_type"], count=int(data["count"]),
        capacity_type=CapacityType(data.get("capacity_type", "on-demand")),
        training_plan_arn=data.get("training_plan_arn"),
        deep_health_checks=bool(data.get("deep_health_checks", True)))


def spec_dict(spec: ClusterSpec) -> dict[str, Any]:
    return {"name": spec.name, "region": spec.region,
            "availability_zone": spec.availability_zone, "instance_type": spec.instance_type,
            "count": spec.count, "capacity_type": spec.capacity_type.value,
            "training_plan_arn": spec.training_plan_arn,
            "deep_health_checks": spec.deep_health_checks}


async def facts_of(app: AppState, name: str) -> dict[str, Any]:
    async with app.sessions() as db:
        row = await repo.get(db, name)
        return dict(row.facts or {}) if row else {}


async def save_facts(app: AppState, name: str, **facts: Any) -> dict[str, Any]:
    async with app.sessions.begin() as db:
        row = await repo.get(db, name)
        merged = {**(row.facts if row else {}), **facts}
        await repo.upsert(db, name, facts=merged)
        return merged


async def set_state(app: AppState, name: str, state: str) -> None:
    async with app.sessions.begin() as db:
        if await repo.get(db, name) is not None:
            await repo.upsert(db, name, state=state)


async def set_hyperpod_name(app: AppState, name: str, hyperpod: str | None) -> None:
    async with app.sessions.begin() as db:
        await repo.upsert(db, name, hyperpod_cluster_name=hyperpod)
