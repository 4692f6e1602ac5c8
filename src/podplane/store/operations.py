"""Operation, step and step-event rows.

Writes made by the runner go through `guard()`: an UPDATE ... WHERE id=? AND lease_owner=?
in the same transaction as the step write, so a process that lost its lease cannot apply a
stale result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import CursorResult, and_, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from podplane.store.models import OperationModel, StepEventModel, StepModel, WriteFenceModel

ACTIVE = ("pending", "running")
TERMINAL = ("succeeded", "failed", "cancelled")


async def insert(db: AsyncSession, row: OperationModel, step_names: Sequence[str]) -> None:
    db.add(row)
    await db.flush()
    for idx, name in enumerate(step_names):
        db.add(StepModel(operation_id=row.id, idx=idx, name=name, status="pending", attempt=0))
    await db.flush()


async def by_id(db: AsyncSession, op_id: str) -> OperationModel | None:
    return await db.get(OperationModel, op_id, populate_existing=True)


async def by_key(db: AsyncSession, key: str) -> OperationModel | None:
    return await db.scalar(select(OperationModel).where(OperationModel.idempotency_key == key))


async def holding_target(db: AsyncSession, target: str) -> OperationModel | None:
    return await db.scalar(select(OperationModel).where(OperationModel.active_target == target))


def ancestors(target: str) -> list[str]:
    """"cluster/a/node/i-1" -> ["cluster/a/node", "cluster/a", "cluster"]."""
    parts = target.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


async def nested_holder(db: AsyncSession, target: str) -> OperationModel | None:
    """An operation holding a target above or below `target` (targets nest: a cluster holds
    its groups and nodes), other than `target` itself."""
    q = select(OperationModel).where(or_(
        OperationModel.active_target.in_(ancestors(target)),
        OperationModel.active_target.startswith(target + "/", autoescape=True)))
    return await db.scalar(q.order_by(OperationModel.created_at).limit(1))


async def lock_tree(db: AsyncSession, target: str) -> None:
    """Serialise starts in one target tree ("cluster/<name>") until the transaction ends, so
    two nested starts cannot both miss each other. SQLite already has one writer at a time."""
    if db.get_bind().dialect.name == "postgresql":
        root = "/".join(target.split("/")[:2])
        await db.execute(text("SELECT pg_advisory_xact_lock(hashtext(:root))"), {"root": root})


async def steps(db: AsyncSession, op_ids: Iterable[str]) -> list[StepModel]:
    q = select(StepModel).where(StepModel.operation_id.in_(list(op_ids)))
    return list((await db.execute(q.order_by(StepModel.operation_id, StepModel.idx))).scalars())


async def events(db: AsyncSession, op_id: str) -> list[StepEventModel]:
    q = select(StepEventModel).where(StepEventModel.operation_id == op_id)
    return list((await db.execute(q.order_by(StepEventModel.id))).scalars())


async def page(
    db: AsyncSession, *, limit: int, before: OperationModel | None, status: str | None,
    kind: str | None, target: str | None,
) -> list[OperationModel]:
    q = select(OperationModel).order_by(OperationModel.created_at.desc(), OperationModel.id.desc())
    if before is not None:
        q = q.where(or_(
            OperationModel.created_at < before.created_at,
            and_(OperationModel.created_at == before.created_at, OperationModel.id < before.id),
        ))
    for column, value in ((OperationModel.status, status), (OperationModel.kind, kind),
                          (OperationModel.target, target)):
        if value is not None:
            q = q.where(column == value)
    return list((await db.execute(q.limit(limit))).scalars())


async def claimable(db: AsyncSession, kinds: Sequence[str]) -> list[tuple[str, str | None,
                                                                          datetime | None]]:
    """Every non-terminal operation of a kind we know: (id, lease_owner, lease_expires_at)."""
    q = select(OperationModel.id, OperationModel.lease_owner, OperationModel.lease_expires_at)
    q = q.where(OperationModel.status.in_(ACTIVE), OperationModel.kind.in_(list(kinds)))
    return [(r[0], r[1], r[2]) for r in (await db.execute(q.order_by(OperationModel.created_at)))]


async def claim(
    db: AsyncSession, op_id: str, observed_owner: str | None, me: str, expires: datetime
) -> bool:
    """Compare-and-swap the lease from the owner we saw to us."""
    owner_is = (OperationModel.lease_owner.is_(None) if observed_owner is None
                else OperationModel.lease_owner == observed_owner)
    q = (update(OperationModel)
         .where(OperationModel.id == op_id, owner_is, OperationModel.status.in_(ACTIVE))
         .values(lease_owner=me, lease_expires_at=expires))
    return _rowcount(await db.execute(q)) == 1


async def renew(db: AsyncSession, claims: dict[str, str], expires: datetime) -> set[str]:
    """Extend our leases ({op id: the fencing token we claimed it with}); returns the ids we
    still hold."""
    held = set()
    for op_id, token in claims.items():
        q = (update(OperationModel)
             .where(OperationModel.id == op_id, OperationModel.lease_owner == token)
             .values(lease_expires_at=expires))
        if _rowcount(await db.execute(q)) == 1:
            held.add(op_id)
    return held


async def release_all(db: AsyncSession, me: str) -> None:
    """Release every lease claimed by process `me` (its tokens are "<me>/<claim id>")."""
    mine = or_(OperationModel.lease_owner == me, OperationModel.lease_owner.startswith(me + "/"))
    q = (update(OperationModel).where(mine).values(lease_owner=None, lease_expires_at=None))
    await db.execute(q)


async def guard(db: AsyncSession, op_id: str, me: str, now: datetime, **values: Any) -> bool:
    """Apply `values` to the operation only if `me` (the fencing token of our claim) still
    holds its lease; bumps the revision."""
    q = (update(OperationModel)
         .where(OperationModel.id == op_id, OperationModel.lease_owner == me)
         .values(revision=OperationModel.revision + 1, updated_at=now, **values))
    return _rowcount(await db.execute(q)) == 1


async def touch(db: AsyncSession, op_id: str, now: datetime, *, where_status: Sequence[str],
                unleased_only: bool = False, **values: Any) -> bool:
    """An update made outside an execution (cancel, retry), allowed only from given statuses."""
    q = (update(OperationModel)
         .where(OperationModel.id == op_id, OperationModel.status.in_(list(where_status)))
         .values(revision=OperationModel.revision + 1, updated_at=now, **values))
    if unleased_only:
        q = q.where(OperationModel.lease_owner.is_(None))
    return _rowcount(await db.execute(q)) == 1


async def update_step(db: AsyncSession, op_id: str, idx: int, **values: Any) -> None:
    q = (update(StepModel).where(StepModel.operation_id == op_id, StepModel.idx == idx)
         .values(**values))
    await db.execute(q)


def add_event(
    db: AsyncSession, op_id: str, step: str, at: datetime, status: str, phase: str | None,
    attempt: int, message: str | None = None, error: dict[str, Any] | None = None,
) -> None:
    db.add(StepEventModel(operation_id=op_id, step=step, at=at, status=status, phase=phase,
                          attempt=attempt, message=message, error=error))


async def bump_fence(db: AsyncSession) -> None:
    """Move the write fence in the caller's transaction (a step's end: ADR 0013)."""
    q = update(WriteFenceModel).where(WriteFenceModel.id == 1).values(
        mark=WriteFenceModel.mark + 1)
    if _rowcount(await db.execute(q)) == 0:
        db.add(WriteFenceModel(id=1, mark=1))


async def fence_mark(db: AsyncSession) -> int:
    return int(await db.scalar(select(WriteFenceModel.mark).where(WriteFenceModel.id == 1))
               or 0)


async def cancel_requested(db: AsyncSession, op_id: str) -> bool:
    q = select(OperationModel.cancel_requested).where(OperationModel.id == op_id)
    return bool(await db.scalar(q))


def _rowcount(result: Any) -> int:
    assert isinstance(result, CursorResult)
    return int(result.rowcount)
