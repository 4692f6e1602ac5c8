"""The cluster row (identity, origin, facts) and the spec as operations carry it."""

from __future__ import annotations

from typing import Any

from podplane.domain.clusters import SPEC, ClusterSpec
from podplane.services.context import AppState
from podplane.store import clusters as repo


def spec_from(data: dict[str, Any]) -> ClusterSpec:
    """The spec an operation or a cluster row stored (fields and rules: ClusterSpec)."""
    return SPEC.validate_python(data)


def spec_dict(spec: ClusterSpec) -> dict[str, Any]:
    return dict(SPEC.dump_python(spec, mode="json"))


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
