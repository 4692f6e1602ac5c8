"""Creating an operation: idempotency keys and the one-mutation-per-target rule.

Both are enforced by the database, so they hold under concurrency and across processes:
UNIQUE(idempotency_key) and a unique index on active_target (set while pending/running).
The loser of a race catches IntegrityError and reads what won. Targets nest ("cluster/a" holds
"cluster/a/node/i-1" and the other way round): the insert transaction looks for a holder above
or below, under a per-tree lock.

`also` runs in the same transaction as the insert (a service's own row, e.g. the cluster a
create registers), so a refused start writes nothing at all.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from podplane.domain.errors import IdempotencyMismatch, TargetBusy
from podplane.ops.clock import Clock
from podplane.ops.workflows import Workflow, Workflows
from podplane.store import operations as repo
from podplane.store.models import OperationModel

_RACE_ATTEMPTS = 3
Also = Callable[[AsyncSession, str], Awaitable[None]]


def request_hash(kind: str, target: str, params: dict[str, Any]) -> str:
    body = json.dumps({"kind": kind, "target": target, "params": params}, sort_keys=True,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def new_operation_id() -> str:
    return "op-" + secrets.token_hex(10)


async def create(
    sessions: async_sessionmaker[AsyncSession], clock: Clock, flows: Workflows, *, kind: str,
    target: str, params: dict[str, Any], key: str | None, face: str, principal: str,
    also: Also | None = None,
) -> tuple[str, bool]:
    """Create the operation, or return the one this idempotency key already made.

    Returns (operation id, created). Raises IdempotencyMismatch or TargetBusy (both 409).
    """
    flow = flows.get(kind)
    digest = request_hash(kind, target, params)
    for _ in range(_RACE_ATTEMPTS):
        if key is not None and (existing := await _by_key(sessions, key, digest)):
            return existing, False
        row = _new_row(clock, flow, target, params, key, digest, face, principal)
        try:
            async with sessions.begin() as db:
                if flow.mutating:
                    await repo.lock_tree(db, target)
                    await _raise_if_nested(db, target)
                await repo.insert(db, row, flow.step_names)
                if also is not None:
                    await also(db, row.id)
            return row.id, True
        except IntegrityError:
            if key is not None and (existing := await _by_key(sessions, key, digest)):
                return existing, False
            await raise_if_busy(sessions, target)
        # The holder finished between our insert and our look-up: try again.
    raise TargetBusy(f"Target {target!r} stayed busy; try again.", hint="Retry the request.")


def _new_row(clock: Clock, flow: Workflow, target: str, params: dict[str, Any],
             key: str | None, digest: str, face: str, principal: str) -> OperationModel:
    now = clock.now()
    return OperationModel(
        id=new_operation_id(), kind=flow.kind, target=target, status="pending",
        requested_face=face, requested_by=principal, idempotency_key=key, request_hash=digest,
        params=params, mutating=flow.mutating, cancel_requested=False,
        active_target=target if flow.mutating else None, revision=0,
        created_at=now, updated_at=now,
    )


async def _by_key(sessions: async_sessionmaker[AsyncSession], key: str,
                  digest: str) -> str | None:
    async with sessions() as db:
        row = await repo.by_key(db, key)
    if row is None:
        return None
    if row.request_hash != digest:
        raise IdempotencyMismatch(
            "This Idempotency-Key was already used with a different request.",
            hint="Use a new key for a new request, or resend exactly the original body.",
            operation_id=row.id,
        )
    return row.id


async def _raise_if_nested(db: AsyncSession, target: str) -> None:
    holder = await repo.nested_holder(db, target)
    if holder is not None:
        raise busy(target, holder)


async def raise_if_busy(sessions: async_sessionmaker[AsyncSession], target: str) -> None:
    async with sessions() as db:
        holder = await repo.holding_target(db, target)
        if holder is None:
            holder = await repo.nested_holder(db, target)
    if holder is not None:
        raise busy(target, holder)


def busy(target: str, holder: OperationModel) -> TargetBusy:
    if holder.active_target != target:
        return TargetBusy(
            f"Target {target!r} is busy: {holder.active_target!r} is held by operation "
            f"{holder.id} ({holder.kind}, {holder.status}).",
            hint="A cluster and its groups and nodes change one at a time. Wait for it "
                 "(operation_wait) or cancel it, then try again.",
            operation_id=holder.id)
    return TargetBusy(
        f"Target {target!r} is busy with operation {holder.id} ({holder.kind}, "
        f"{holder.status}).",
        hint="Wait for it to finish (operation_wait) or cancel it, then try again.",
        operation_id=holder.id,
    )
