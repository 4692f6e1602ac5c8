"""Managed-cluster rows and per-principal preferences."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from podplane.store.models import ClusterModel, PreferenceModel


async def get(db: AsyncSession, name: str, *, for_update: bool = False) -> ClusterModel | None:
    """for_update: the row stays locked until the transaction ends (PostgreSQL; SQLite has one
    writer at a time and ignores it)."""
    return await db.get(ClusterModel, name, populate_existing=True, with_for_update=for_update)


async def all_clusters(db: AsyncSession) -> list[ClusterModel]:
    return list((await db.execute(select(ClusterModel).order_by(ClusterModel.name))).scalars())


async def upsert(db: AsyncSession, name: str, **fields: Any) -> ClusterModel:
    now = datetime.now(UTC)
    row = await get(db, name)
    if row is None:
        row = ClusterModel(name=name, created_at=now, updated_at=now, **fields)
        db.add(row)
    else:
        for key, value in fields.items():
            setattr(row, key, value)
        row.updated_at = now
    await db.flush()
    return row


async def remove(db: AsyncSession, name: str) -> None:
    row = await get(db, name)
    if row is not None:
        await db.delete(row)


async def preference(db: AsyncSession, principal: str, key: str) -> str | None:
    row = await db.get(PreferenceModel, (principal, key))
    return row.value if row else None


async def set_preference(db: AsyncSession, principal: str, key: str, value: str | None) -> None:
    row = await db.get(PreferenceModel, (principal, key))
    if value is None:
        if row is not None:
            await db.delete(row)
    elif row is None:
        db.add(PreferenceModel(principal=principal, key=key, value=value))
    else:
        row.value = value
