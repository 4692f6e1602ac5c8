"""What a group or node mutation answers: an operation (202), no change (200), or a plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from podplane.services import operations
from podplane.services.context import Ctx
from podplane.services.operations import Operation, start_operation


@dataclass(frozen=True)
class Outcome:
    changed: bool
    plan: dict[str, Any] = field(default_factory=dict)
    operation: Operation | None = None
    dry_run: bool = False

    @property
    def id(self) -> str | None:  # the audit log links the operation
        return self.operation.id if self.operation else None


async def key_used(ctx: Ctx, key: str | None) -> bool:
    """A replay (same Idempotency-Key) must return its operation even though the cloud has
    moved on, so it skips the checks that compare against current state."""
    return await operations.key_used(ctx.app, key)


async def replay(ctx: Ctx, kind: str, target: str, params: dict[str, Any],
                 key: str | None) -> Outcome:
    """The operation a used Idempotency-Key started (services/operations.replayed_params)."""
    if key is not None:
        params = await operations.replayed_params(ctx.app, key, params)
    return await start(ctx, kind, target, params, key, {})


async def start(ctx: Ctx, kind: str, target: str, params: dict[str, Any], key: str | None,
                plan: dict[str, Any]) -> Outcome:
    op = await start_operation(ctx, kind, target, params, key)
    return Outcome(True, plan, op)



async def unchanged_or(conflict: Exception, ctx: Ctx, kind: str, target: str,
                       request: dict[str, Any], plan: dict[str, Any], dry_run: bool,
                       field: str = "request",
                       about: Callable[[dict[str, Any]], bool] | None = None) -> Outcome:
    """For a create whose object exists: `changed: false` when the operation that made it was
    asked for this same request (its params[field]); otherwise `conflict` stands. The same
    request again changes nothing (issue 31)."""
    made_by = await operations.made_by_same_request(ctx.app, kind, target, field, request,
                                                    about)
    if made_by is None:
        raise conflict
    note = "Made already by this same request; nothing to change."
    return Outcome(False, {**plan, "note": note, "made_by": made_by}, dry_run=dry_run)
