"""Operations: start (for other services), read, wait, retry a step, cancel.

Other services start their durable work with `start_operation(ctx, kind, target, params,
idempotency_key)` and return the operation to their face (202). Everything goes through the
engine's own API (`OpsEngine`); nothing here reads the engine's tables.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from podplane.domain.effects import Effect
from podplane.ops.engine import Also, OpsEngine
from podplane.ops.views import Operation
from podplane.services.access import authority
from podplane.services.context import AppState, Ctx
from podplane.services.registry import service

__all__ = ["Operation", "OperationPage", "engine_of", "start_operation"]
WAIT_CAP_SECONDS = 50.0


@dataclass(frozen=True)
class OperationPage:
    items: list[Operation]
    next_cursor: str | None


def engine_of(app: AppState) -> OpsEngine:
    """The running engine; a CLI context without a server gets an idle one (reads work)."""
    if app.ops is None:
        app.ops = OpsEngine.build(app.sessions)
    return app.ops


async def key_used(app: AppState, key: str | None) -> bool:
    """A replay (same Idempotency-Key) returns its operation even though the cloud has moved
    on, so callers skip the checks that compare against current state."""
    return key is not None and await engine_of(app).key_used(key)


async def made_by_same_request(app: AppState, kind: str, target: str, field: str | None,
                               request: dict[str, Any],
                               about: Callable[[dict[str, Any]], bool] | None = None
                               ) -> str | None:
    """The id of the newest succeeded `kind` on `target` when it was asked for exactly
    `request` (its params[field], or all its params), else None. A create whose object
    exists answers `changed: false` when this holds, not a conflict: the same request again
    changes nothing (issue 31)."""
    made = await engine_of(app).last_succeeded(kind, target, about)
    asked = None if made is None else made[1] if field is None else made[1].get(field)
    if made is None or _canonical(asked) != _canonical(request):
        return None
    return made[0]


async def replayed_params(app: AppState, key: str, asked: dict[str, Any]) -> dict[str, Any]:
    """The parameters a replay of `key` starts with. A first start may have added facts it
    derived (an NCCL test's instance type, a download's source bucket) that a replay can no
    longer derive; when what the replay names agrees with the stored parameters, those stand
    in, so the replay answers its operation. Otherwise `asked`, which the engine refuses as a
    reused key."""
    stored = await engine_of(app).params_of_key(key)
    if stored is not None and all(_canonical(stored.get(k)) == _canonical(v)
                                  for k, v in asked.items()):
        return stored
    return asked


def _canonical(value: Any) -> Any:
    """As the operation's JSON column holds it (tuples are lists, enums their values)."""
    return json.loads(json.dumps(value, default=str, sort_keys=True))


@service(Effect.MUTATE, "operation.start", target=lambda kind, target, *_a, **_k: target)
async def start_operation(
    ctx: Ctx, kind: str, target: str, params: dict[str, Any],
    idempotency_key: str | None = None, also: Also | None = None,
) -> Operation:
    return await engine_of(ctx.app).begin(kind, target, params, key=idempotency_key,
                                          face=ctx.principal.face,
                                          principal=ctx.principal.name, also=also)


@service(Effect.READ, "operation.get")
async def get_operation(ctx: Ctx, op_id: str, history: bool = True) -> Operation:
    return await engine_of(ctx.app).read(op_id, history=history)


@service(Effect.READ, "operation.list")
async def list_operations(
    ctx: Ctx, status: str | None = None, kind: str | None = None, target: str | None = None,
    limit: int = 50, cursor: str | None = None, history: bool = False,
) -> OperationPage:
    items, next_cursor = await engine_of(ctx.app).page(
        status=status, kind=kind, target=target, limit=limit, cursor=cursor, history=history)
    return OperationPage(items, next_cursor)


@service(Effect.READ, "operation.wait")
async def wait_operation(
    ctx: Ctx, op_id: str, timeout: float = 30.0, revision: int | None = None
) -> Operation:
    """Long-poll: until terminal, until the revision differs from `revision`, or the timeout
    (capped at 50 s) — then the current state."""
    timeout = min(max(timeout, 0.0), WAIT_CAP_SECONDS)
    return await engine_of(ctx.app).wait(op_id, timeout, revision)


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
async def retry_step(ctx: Ctx, op_id: str, step: str, *, confirm: bool = False) -> Operation:
    """Needs the authority the operation's start needed (services.access.authority)."""
    await _guard(ctx, "operation.retry_step", op_id, confirm)
    return await engine_of(ctx.app).retry_step(op_id, step, ctx.principal.name)


@service(Effect.MUTATE, "operation.cancel", target=lambda op_id, *_a, **_k: f"operation/{op_id}")
async def cancel_operation(ctx: Ctx, op_id: str, *, confirm: bool = False) -> Operation:
    await _guard(ctx, "operation.cancel", op_id, confirm)
    return await engine_of(ctx.app).cancel(op_id)


async def _guard(ctx: Ctx, action: str, op_id: str, confirm: bool) -> None:
    op = await engine_of(ctx.app).read(op_id, history=False)
    await authority.guard(ctx, action, op_id, op.kind, confirm=confirm)
