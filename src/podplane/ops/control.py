"""Acting on an existing operation from outside its execution: cancel, retry a step, wait.

Services reach these through `OpsEngine`'s methods, never directly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from podplane.domain.errors import Conflict, NotFound
from podplane.ops import views
from podplane.ops.starting import busy, raise_if_busy
from podplane.store import operations as repo
from podplane.store.models import OperationModel, StepModel

if TYPE_CHECKING:
    from podplane.ops.engine import OpsEngine

# Waiters' clock slice, and how often they re-read without a notification (a lost NOTIFY,
# or a change written by a process that does not notify, such as a local CLI).
REREAD_SECONDS = 1.0
SAFETY_REREAD_SECONDS = 15.0


class OperationFinished(Conflict):
    code, title = "operation_finished", "The operation has already finished"


class NotRetryable(Conflict):
    code, title = "step_not_retryable", "This step cannot be retried now"


async def read(engine: OpsEngine, op_id: str, *, history: bool = True) -> views.Operation:
    async with engine.sessions() as db:
        op = await views.load(db, op_id, history=history)
    if op is None:
        raise NotFound(f"No operation {op_id!r}.")
    return op


async def page(
    engine: OpsEngine, *, status: str | None, kind: str | None, target: str | None,
    limit: int, cursor: str | None, history: bool,
) -> tuple[list[views.Operation], str | None]:
    """Newest first; the cursor is the id of the last operation of the previous page."""
    return await engine.notifier.page(
        (status, kind, target, limit, cursor, history),
        lambda: _page(engine, status=status, kind=kind, target=target, limit=limit,
                      cursor=cursor, history=history))


async def _page(
    engine: OpsEngine, *, status: str | None, kind: str | None, target: str | None,
    limit: int, cursor: str | None, history: bool,
) -> tuple[list[views.Operation], str | None]:
    async with engine.sessions() as db:
        before = await repo.by_id(db, cursor) if cursor else None
        if cursor and before is None:
            raise NotFound(f"Cursor {cursor!r} names no operation.")
        rows = await repo.page(db, limit=limit + 1, before=before, status=status, kind=kind,
                               target=target)
        items = await views.load_many(db, rows[:limit], history=history)
    return items, (items[-1].id if len(rows) > limit else None)


async def cancel(engine: OpsEngine, op_id: str) -> views.Operation:
    """Cooperative: flag it; the execution stops at its next phase, poll or step boundary.

    A pending operation that no process has picked up yet is cancelled at once.
    """
    now = engine.clock.now()
    async with engine.sessions.begin() as db:
        row = await _row(db, op_id)
        if row.status in repo.TERMINAL:
            raise OperationFinished(f"Operation {op_id} is already {row.status}.")
        done = await repo.touch(db, op_id, now, where_status=["pending"], unleased_only=True,
                                status="cancelled", cancel_requested=True, active_target=None)
        if not done:
            await repo.touch(db, op_id, now, where_status=repo.ACTIVE, cancel_requested=True)
    engine.changed(op_id)
    return await read(engine, op_id)


async def retry_step(engine: OpsEngine, op_id: str, step: str, by: str) -> views.Operation:
    """Reset `step` and every later step of a failed or cancelled operation, then resume."""
    now = engine.clock.now()
    target = ""
    try:
        async with engine.sessions.begin() as db:
            row = await _row(db, op_id)
            target = row.target
            steps = await repo.steps(db, [op_id])
            start = _retry_index(row, steps, step)
            if row.mutating:  # it holds its target again: nothing above or below may run
                await repo.lock_tree(db, row.target)
                holder = await repo.nested_holder(db, row.target)
                if holder is not None:
                    raise busy(row.target, holder)
            ok = await repo.touch(
                db, op_id, now, where_status=["failed", "cancelled"], unleased_only=True,
                status="pending", error=None, cancel_requested=False,
                active_target=row.target if row.mutating else None,
            )
            if not ok:
                raise NotRetryable(f"Operation {op_id} changed meanwhile; read it again.")
            for s in steps[start.idx:]:
                await repo.update_step(db, op_id, s.idx, status="pending", phase=None,
                                       error=None, ended_at=None, checkpoint=None, detail=None)
            repo.add_event(db, op_id, start.name, now, "pending", None, start.attempt,
                           f"retry requested by {by}")
    except IntegrityError:
        await raise_if_busy(engine.sessions, target)
        raise
    engine.changed(op_id)
    return await read(engine, op_id)


def _retry_index(row: OperationModel, steps: list[StepModel], name: str) -> StepModel:
    if row.status not in ("failed", "cancelled"):
        raise NotRetryable(
            f"Operation {row.id} is {row.status}; only a failed or cancelled operation's "
            "steps can be retried.",
            hint="Wait for it to finish, or cancel it first.")
    match = [s for s in steps if s.name == name]
    if not match:
        raise NotFound(f"Operation {row.id} has no step {name!r}.",
                       hint="Steps: " + ", ".join(s.name for s in steps))
    earlier = [s.name for s in steps if s.idx < match[0].idx and s.status != "succeeded"]
    if earlier:
        raise NotRetryable(f"Step {earlier[0]!r} comes first and has not succeeded.",
                           hint=f"Retry {earlier[0]!r} instead.")
    return match[0]


async def wait(engine: OpsEngine, op_id: str, timeout: float,
               revision: int | None = None) -> views.Operation:
    """Return when the operation is terminal, when its revision differs from `revision`
    (if given), or at the timeout with its current state.

    The database is read when the engine notifies a change (one read shared by every waiter,
    `Notifier.read`), at the deadline, and every SAFETY_REREAD_SECONDS in case a notification
    was lost. The waiter idles in REREAD_SECONDS slices (Clock.idle: it never moves a stepping
    test clock) and its timeout runs out on the clock or on the slices it idled, whichever
    comes first (a stepping clock's time moves only with the work)."""
    notifier = engine.notifier
    deadline = engine.clock.now() + timedelta(seconds=max(0.0, timeout))
    budget = max(0.0, timeout)
    event = notifier.subscribe(op_id)
    try:
        op = await notifier.read(op_id, lambda: read(engine, op_id))
        last_read = engine.clock.now()
        while True:
            left = min((deadline - engine.clock.now()).total_seconds(), budget)
            changed = revision is not None and op.revision != revision
            if op.terminal or changed or left <= 0:
                return op
            pause = min(left, REREAD_SECONDS)
            await _first(event.wait(), engine.clock.idle(pause))
            budget -= 0.0 if event.is_set() else pause
            now = engine.clock.now()
            due = (now - last_read).total_seconds() >= SAFETY_REREAD_SECONDS
            if event.is_set() or due or now >= deadline or budget <= 0:
                event.clear()
                op = await notifier.read(op_id, lambda: read(engine, op_id))
                last_read = now
    finally:
        notifier.unsubscribe(op_id, event)


async def _first(*waits: Awaitable[Any]) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task


async def _row(db: Any, op_id: str) -> OperationModel:
    row = await repo.by_id(db, op_id)
    if row is None:
        raise NotFound(f"No operation {op_id!r}.")
    return row
