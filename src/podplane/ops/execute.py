"""Drive one leased operation through its steps.

Every write is guarded by the lease (see store.operations.guard); losing the lease stops the
execution silently, because another process now owns the operation.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from podplane.domain.errors import CloudError, PodplaneError
from podplane.ops.clock import Clock
from podplane.ops.context import PointHook, StepContext
from podplane.ops.notify import Notifier
from podplane.ops.workflows import StepFn, Workflow, Workflows
from podplane.store import operations as repo
from podplane.store.models import OperationModel, StepModel

log = logging.getLogger("podplane.ops")
MAX_RETRIES = 8
BACKOFF_CAP = 60.0
# Retryable in the sense that trying again later may work, but not by itself: capacity is a
# person's decision (wait, another zone or type, a training plan), so the step fails with its
# hint and retry-step is that decision (domain.cloud_errors.capacity_error).
NEEDS_A_DECISION = frozenset({"insufficient_capacity"})
# A step ends after every cloud change it made: from then on no view may answer from what it
# read before (ADR 0013), on this process (`Engine.fences`) or any other (the write fence).
ENDS = frozenset({"succeeded", "failed", "cancelled"})


class LeaseLost(BaseException):
    """Another process holds the operation now: stop without writing anything."""


class Cancelled(BaseException):
    """A cancel was requested; raised at the next cooperative check."""


class StepFailed(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


@dataclass
class Engine:
    """What an execution needs from the process."""

    sessions: async_sessionmaker[AsyncSession]
    clock: Clock
    notifier: Notifier
    owner: str
    workflows: Workflows
    backoff_base: float = 2.0
    on_point: PointHook | None = None
    # Told before a step's or an operation's end is written (the views' cache: ADR 0013).
    fences: list[Callable[[], None]] = field(default_factory=list)

    def fence(self) -> None:
        for told in self.fences:
            told()


def backoff(base: float, retry: int) -> float:
    return float(min(BACKOFF_CAP, base * 2 ** (retry - 1)))


def backs_off(err: CloudError) -> bool:
    """Whether the engine retries this error on its own (throttling, unavailable, ...)."""
    return err.retryable and err.code not in NEEDS_A_DECISION


def error_of(err: BaseException) -> dict[str, Any]:
    if isinstance(err, PodplaneError):
        return {"code": err.code, "message": err.message, "hint": err.hint}
    # Never the exception's own text (it may quote SQL, paths or secrets): a log id that finds
    # the traceback in the server log, which only those who run the server read.
    log_id = secrets.token_hex(6)
    log.error("log id %s: %s", log_id, f"{type(err).__name__}: {err}", exc_info=err)
    return {"code": "internal_error", "log_id": log_id,
            "message": f"The step failed on an unexpected error (log id {log_id}).",
            "hint": "This looks like a bug; retry the step, and report it with the log id if "
                    "it happens again."}


class Execution:
    def __init__(self, engine: Engine, op_id: str, *, lease: str | None = None) -> None:
        self.e = engine
        self.op_id = op_id
        self.lease = lease or engine.owner  # the fencing token every write is guarded by
        self.current: StepModel | None = None

    async def run(self) -> None:
        try:
            await self._run()
        except LeaseLost:
            log.info("operation %s: lease lost, another process owns it", self.op_id)

    async def _run(self) -> None:
        op, steps = await self._load()
        flow = self.e.workflows.get(op.kind)
        result = dict(op.result or {})
        try:
            await self.check_cancel()
            if op.status == "pending":
                await self._write({"status": "running"})
            for step in steps:
                if step.status == "succeeded":
                    continue
                await self.check_cancel()
                self.current = step
                await self._run_step(op, flow, step, result)
            await self._finish("succeeded", result=result)
        except Cancelled:
            await self._undo(flow, op.params, result)
            await self._finish_cancelled()
        except StepFailed as failed:
            await self._finish("failed", error=failed.error)

    async def _load(self) -> tuple[OperationModel, list[StepModel]]:
        async with self.e.sessions() as db:
            op = await repo.by_id(db, self.op_id)
            assert op is not None
            return op, await repo.steps(db, [self.op_id])

    async def _run_step(
        self, op: OperationModel, flow: Workflow, step: StepModel,
        result: dict[str, Any],
    ) -> None:
        fn = flow.step(step.name)
        if fn is None:
            await self._fail_step(step, {"code": "step_unknown", "hint": None,
                                         "message": f"This version has no step {step.name!r}."})
        assert fn is not None
        await self._start_step(step)
        ctx = StepContext(
            op_id=op.id, kind=op.kind, target=op.target, params=dict(op.params), step=step.name,
            idx=step.idx, attempt=step.attempt, clock=self.e.clock, phase_name=step.phase,
            checkpoint=dict(step.checkpoint or {}), results=dict(result), _run=self,
        )
        result.update(await self._call_with_retries(ctx, fn, step) or {})
        # The result so far is saved with the step, so a retried operation keeps it.
        await self._step_write(step, {"status": "succeeded", "ended_at": self.e.clock.now()},
                               "succeeded", message=None, op_values={"result": dict(result)})

    async def _call_with_retries(
        self, ctx: StepContext, fn: StepFn, step: StepModel
    ) -> dict[str, Any] | None:
        retries = 0
        while True:
            try:
                return await fn(ctx)
            except CloudError as err:
                if not backs_off(err) or retries >= MAX_RETRIES:
                    await self._fail_step(step, error_of(err))
                retries += 1
                await self._throttled(ctx, step, err, retries)
            except PodplaneError as err:
                await self._fail_step(step, error_of(err))
            except Exception as err:  # a bug in a step must fail the step, not the runner
                log.warning("operation %s step %s raised (logged below)", self.op_id, step.name)
                await self._fail_step(step, error_of(err))

    async def _throttled(self, ctx: StepContext, step: StepModel, err: CloudError,
                         retries: int) -> None:
        delay = backoff(self.e.backoff_base, retries)
        at = self.e.clock.now() + timedelta(seconds=delay)
        message = f"{err.code}: {err.message}; retrying at {at.isoformat()} (retry {retries})"
        detail = {**(step.detail or {}), "retries": retries, "message": message,
                  "retry_at": at.isoformat()}
        await self._step_write(step, {"detail": detail}, "running", message=message)
        await ctx.sleep(delay)

    async def _start_step(self, step: StepModel) -> None:
        if step.status == "running":  # resuming after a restart: same attempt, same token
            await self._step_write(step, {}, "running", message=f"resumed by {self.e.owner}")
            return
        step.attempt += 1
        values = {"status": "running", "attempt": step.attempt, "phase": None, "error": None,
                  "started_at": self.e.clock.now(), "ended_at": None, "checkpoint": {},
                  "detail": None}
        step.phase, step.checkpoint, step.detail = None, {}, None
        await self._step_write(step, values, "running", message="started")

    async def _fail_step(self, step: StepModel, error: dict[str, Any]) -> None:
        values = {"status": "failed", "error": error, "ended_at": self.e.clock.now()}
        await self._step_write(step, values, "failed", message=error["message"], error=error)
        raise StepFailed({"step": step.name, **error})

    async def _finish(self, status: str, **values: Any) -> None:
        """The end, fenced like a step's end: a cancel's clean-up may have changed the cloud
        after the last step ended."""
        self.e.fence()
        await self._write({"status": status, "active_target": None, "lease_owner": None,
                           "lease_expires_at": None, **values}, fence=True)

    async def _undo(self, flow: Workflow, params: dict[str, Any] | None,
                    result: dict[str, Any]) -> None:
        """The workflow's cancel hook, before the operation is marked cancelled. Its failure is
        logged, never a reason to leave the operation running."""
        if flow.on_cancel is None:
            return
        try:
            await flow.on_cancel(dict(params or {}), dict(result))
        except Exception:
            log.warning("operation %s: cancel clean-up failed", self.op_id, exc_info=True)

    async def _finish_cancelled(self) -> None:
        step = self.current
        if step is not None and step.status == "running":
            await self._step_write(step, {"status": "cancelled", "ended_at": self.e.clock.now()},
                                   "cancelled", message="cancel requested")
        await self._finish("cancelled")

    # -- persistence used by StepContext ------------------------------------------------

    async def save_phase(self, ctx: StepContext, phase: str) -> None:
        step = self._step(ctx)
        step.phase, step.checkpoint = phase, dict(ctx.checkpoint)
        await self._step_write(step, {"phase": phase, "checkpoint": dict(ctx.checkpoint)},
                               "running", message=None)

    async def save_checkpoint(self, ctx: StepContext) -> None:
        step = self._step(ctx)
        step.checkpoint = dict(ctx.checkpoint)
        await self._step_write(step, {"checkpoint": dict(ctx.checkpoint)}, "running",
                               message=None)

    async def save_note(self, ctx: StepContext, message: str, detail: dict[str, Any]) -> None:
        step = self._step(ctx)
        step.detail = {**(step.detail or {}), **detail, "message": message}
        await self._step_write(step, {"detail": step.detail}, "running", message=message)

    async def check_cancel(self) -> None:
        async with self.e.sessions() as db:
            if await repo.cancel_requested(db, self.op_id):
                raise Cancelled()

    def reached(self, step: str, point: str) -> None:
        if self.e.on_point is not None:
            self.e.on_point(step, point)

    def _step(self, ctx: StepContext) -> StepModel:
        assert self.current is not None and self.current.idx == ctx.idx
        return self.current

    async def _step_write(self, step: StepModel, values: dict[str, Any], status: str, *,
                          message: str | None, error: dict[str, Any] | None = None,
                          op_values: dict[str, Any] | None = None) -> None:
        for key, value in values.items():
            setattr(step, key, value)
        now, ends = self.e.clock.now(), status in ENDS and "status" in values
        if ends:
            self.e.fence()
        async with self.e.sessions.begin() as db:
            if not await repo.guard(db, self.op_id, self.lease, now, **(op_values or {})):
                raise LeaseLost()
            if values:
                await repo.update_step(db, self.op_id, step.idx, **values)
            if ends:
                await repo.bump_fence(db)
            repo.add_event(db, self.op_id, step.name, now, status, step.phase, step.attempt,
                           message, error)
        self.e.notifier.notify(self.op_id)

    async def _write(self, values: dict[str, Any], *, fence: bool = False) -> None:
        async with self.e.sessions.begin() as db:
            if not await repo.guard(db, self.op_id, self.lease, self.e.clock.now(), **values):
                raise LeaseLost()
            if fence:
                await repo.bump_fence(db)
        self.e.notifier.notify(self.op_id)
