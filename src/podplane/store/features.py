"""Managed features' desired state, one row per cluster and feature."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from podplane.store.models import FeatureModel


async def desired(db: AsyncSession, cluster: str) -> dict[str, FeatureModel]:
    rows = await db.execute(select(FeatureModel).where(FeatureModel.cluster == cluster))
    return {r.feature: r for r in rows.scalars()}


async def put(db: AsyncSession, cluster: str, feature: str, *, enabled: bool,
              settings: dict[str, Any], by: str) -> None:
    row = await db.get(FeatureModel, (cluster, feature))
    now = datetime.now(UTC)
    if row is None:
        db.add(FeatureModel(cluster=cluster, feature=feature, enabled=enabled,
                            settings=settings, updated_by=by, updated_at=now))
        return
    row.enabled, row.settings, row.updated_by, row.updated_at = enabled, settings, by, now
