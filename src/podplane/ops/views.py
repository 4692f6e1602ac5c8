"""The operation as clients see it (docs/operations.md), read from the store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from podplane.store import operations as repo
from podplane.store.models import OperationModel, StepEventModel, StepModel

STATUS_TOOL = "operation_wait"
TERMINAL = frozenset(repo.TERMINAL)


@dataclass(frozen=True)
class StepEvent:
    at: datetime
    status: str
    phase: str | None
    attempt: int
    message: str | None
    error: dict[str, Any] | None


@dataclass(frozen=True)
class Step:
    name: str
    status: str
    phase: str | None
    attempt: int
    started_at: datetime | None
    ended_at: datetime | None
    detail: dict[str, Any] | None
    error: dict[str, Any] | None
    history: list[StepEvent] | None = None


@dataclass(frozen=True)
class RequestedBy:
    face: str
    principal: str


@dataclass(frozen=True)
class Operation:
    id: str
    kind: str
    target: str
    status: str
    steps: list[Step]
    requested_by: RequestedBy
    idempotency_key: str | None
    created_at: datetime
    updated_at: datetime
    revision: int
    cancel_requested: bool
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    status_url: str = ""
    status_tool: str = STATUS_TOOL

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


async def load(db: AsyncSession, op_id: str, *, history: bool) -> Operation | None:
    row = await repo.by_id(db, op_id)
    if row is None:
        return None
    return (await load_many(db, [row], history=history))[0]


async def load_many(db: AsyncSession, rows: list[OperationModel], *,
                    history: bool) -> list[Operation]:
    by_op: dict[str, list[StepModel]] = {r.id: [] for r in rows}
    for step in await repo.steps(db, by_op):
        by_op[step.operation_id].append(step)
    out = []
    for row in rows:
        events = await repo.events(db, row.id) if history else None
        out.append(_operation(row, by_op[row.id], events))
    return out


def _operation(row: OperationModel, steps: list[StepModel],
               events: list[StepEventModel] | None) -> Operation:
    return Operation(
        id=row.id, kind=row.kind, target=row.target, status=row.status,
        steps=[_step(s, events) for s in steps],
        requested_by=RequestedBy(face=row.requested_face, principal=row.requested_by),
        idempotency_key=row.idempotency_key, created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at), revision=row.revision,
        cancel_requested=row.cancel_requested, result=row.result, error=row.error,
        status_url=f"/api/v1/operations/{row.id}",
    )


def _step(s: StepModel, events: list[StepEventModel] | None) -> Step:
    history = None
    if events is not None:
        history = [StepEvent(_utc(e.at), e.status, e.phase, e.attempt, e.message, e.error)
                   for e in events if e.step == s.name]
    return Step(s.name, s.status, s.phase, s.attempt, _utc_or_none(s.started_at),
                _utc_or_none(s.ended_at), s.detail, s.error, history)


def _utc(at: datetime) -> datetime:
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _utc_or_none(at: datetime | None) -> datetime | None:
    return None if at is None else _utc(at)
