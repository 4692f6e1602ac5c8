"""Append and read the audit log."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from podplane.domain.principal import Principal
from podplane.store.models import AuditModel


async def append(
    db: AsyncSession, *, principal: Principal, action: str, target: str, result: str,
    operation_id: str | None = None, detail: dict[str, Any] | None = None,
) -> None:
    db.add(
        AuditModel(
            at=datetime.now(UTC), principal=principal.name, role=principal.role.value,
            face=principal.face, action=action, target=target[:256], result=result[:32],
            operation_id=operation_id, detail=detail,
        )
    )


async def page(
    db: AsyncSession, *, limit: int, before_id: int | None, principal: str | None,
    action: str | None,
) -> list[AuditModel]:
    q = select(AuditModel).order_by(AuditModel.id.desc()).limit(limit)
    if before_id is not None:
        q = q.where(AuditModel.id < before_id)
    if principal:
        q = q.where(AuditModel.principal == principal)
    if action:
        q = q.where(AuditModel.action == action)
    return list((await db.execute(q)).scalars())


async def started(db: AsyncSession, operation_id: str, action: str) -> list[dict[str, Any]]:
    """The authority recorded by the successful `action` rows naming this operation."""
    q = select(AuditModel.detail).where(AuditModel.operation_id == operation_id,
                                        AuditModel.action == action, AuditModel.result == "ok")
    return [d["authority"] for d in (await db.execute(q)).scalars()
            if isinstance(d, dict) and isinstance(d.get("authority"), dict)]
