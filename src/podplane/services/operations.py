"""Operations: start (for other services), read, wait, retry a step, cancel.

Other services start their durable work with `start_operation(ctx, kind, target, params,
idempotency_key)` and return the operation to their face (202).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podplane.domain.effects import Effect
from podplane.domain.errors import NotFound
from podplane.ops import control, starting, testing, views
from podplane.ops.clock import Clock
from podplane.ops.engine import OpsEngine
from podplane.services.cloud_access import cloud_of
from podplane.services.context import AppState, Ctx
from podplane.services.groups import workflows as group_workflows
from podplane.services.nodes import workflows as node_workflows
from podplane.services.registry import service

Operation = views.Operation
WAIT_CAP_SECONDS = 50.0
LEDGER_ENV = "PODPLANE_TEST_LEDGER"


@dataclass(frozen=True)
class OperationPage:
    items: list[Operation]
    next_cursor: str | None


async def start_engine(state: AppState) -> OpsEngine:
    """Build and start the runner (bootstrap's lifespan). Tests may preset extras["ops_clock"]."""
    if testing.enabled():
        testing.register(test_ledger(state))
    group_workflows.register(cloud_of(state), state)  # instance groups and nodes
    node_workflows.register(cloud_of(state), state)
    clock: Clock | None = state.extras.get("ops_clock")
    engine = OpsEngine.build(state.sessions, clock, state.extras.get("ops_backoff", 2.0))
    state.extras["ops"] = engine
    await engine.start()
    return engine


def test_ledger(state: AppState) -> Path:
    return Path(os.environ.get(LEDGER_ENV) or state.settings.home / "fake-cloud.jsonl")


def engine_of(app: AppState) -> OpsEngine:
    """The running engine; a CLI context without a server gets an idle one (reads work)."""
    engine = app.extras.get("ops")
    if engine is None:
        engine = app.extras["ops"] = OpsEngine.build(app.sessions)
    assert isinstance(engine, OpsEngine)
    return engine


@service(Effect.MUTATE, "operation.start", target=lambda kind, target, *_a, **_k: target)
async def start_operation(
    ctx: Ctx, kind: str, target: str, params: dict[str, Any],
    idempotency_key: str | None = None,
) -> Operation:
    return await _start(ctx, kind, target, params, idempotency_key)


@service(Effect.MUTATE, "operation.test_start", target=lambda target, *_a, **_k: target)
async def start_test_operation(
    ctx: Ctx, target: str, params: dict[str, Any], idempotency_key: str | None = None
) -> Operation:
    if not testing.enabled():
        raise NotFound("Test workflows are disabled.", hint=f"Set {testing.ENV}=1 to enable.")
    return await _start(ctx, testing.KIND, target, params, idempotency_key)


async def _start(ctx: Ctx, kind: str, target: str, params: dict[str, Any],
                 key: str | None) -> Operation:
    engine = engine_of(ctx.app)
    op_id, created = await starting.create(
        engine.sessions, engine.clock, kind=kind, target=target, params=params, key=key,
        face=ctx.principal.face, principal=ctx.principal.name,
    )
    if created:
        engine.changed(op_id)
    return await control.read(engine, op_id, history=False)


@service(Effect.READ, "operation.get")
async def get_operation(ctx: Ctx, op_id: str, history: bool = True) -> Operation:
    return await control.read(engine_of(ctx.app), op_id, history=history)


@service(Effect.READ, "operation.list")
async def list_operations(
    ctx: Ctx, status: str | None = None, kind: str | None = None, target: str | None = None,
    limit: int = 50, cursor: str | None = None, history: bool = False,
) -> OperationPage:
    items, next_cursor = await control.page(
        engine_of(ctx.app), status=status, kind=kind, target=target, limit=limit,
        cursor=cursor, history=history)
    return OperationPage(items, next_cursor)


@service(Effect.READ, "operation.wait")
async def wait_operation(
    ctx: Ctx, op_id: str, timeout: float = 30.0, revision: int | None = None
) -> Operation:
    """Long-poll: until terminal, until the revision differs from `revision`, or the timeout
    (capped at 50 s) — then the current state."""
    timeout = min(max(timeout, 0.0), WAIT_CAP_SECONDS)
    return await control.wait(engine_of(ctx.app), op_id, timeout, revision)


async def watch_operation(ctx: Ctx, op_id: str) -> AsyncIterator[Operation]:
    """Every new state of the operation until it is terminal (for the WebSocket)."""
    op = await get_operation(ctx, op_id)
    yield op
    while not op.terminal:
        last = op.revision
        op = await wait_operation(ctx, op_id, WAIT_CAP_SECONDS, last)
        if op.revision != last:
            yield op


@service(Effect.MUTATE, "operation.retry_step",
         target=lambda op_id, step, *_a, **_k: f"operation/{op_id}/{step}")
async def retry_step(ctx: Ctx, op_id: str, step: str) -> Operation:
    return await control.retry_step(engine_of(ctx.app), op_id, step, ctx.principal.name)


@service(Effect.MUTATE, "operation.cancel", target=lambda op_id, *_a, **_k: f"operation/{op_id}")
async def cancel_operation(ctx: Ctx, op_id: str) -> Operation:
    return await control.cancel(engine_of(ctx.app), op_id)
