"""The submit / inspect / poll pattern for one cloud mutation inside a step.

    state = await mutate_once(ctx, token=ctx.client_token(),
                              submit=lambda: cloud.create(token=...),
                              inspect=lambda: cloud.describe_by_token(...),
                              done=lambda s: s["status"] in ("ACTIVE", "FAILED"))

First run: persist "submitting" (with the client token) -> call -> persist "submitted" ->
"polling" until done. On resume (crash, restart or a throttle retry) with the same token,
inspect first: if the resource exists, never call again; if it does not, submit again with
the same client token (the cloud deduplicates by token).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar

from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext

S = TypeVar("S")
IN_FLIGHT = ("submitting", "submitted", "polling")


async def mutate_once(
    ctx: StepContext, *, token: str, submit: Callable[[], Awaitable[Any]],
    inspect: Callable[[], Awaitable[S | None]], done: Callable[[S], bool],
    poll_every: float = 10.0, timeout: float | None = None, what: str = "the change",
    **checkpoint: Any,
) -> S:
    """`timeout`: seconds of polling (engine clock, counted from the persisted start of the
    "polling" phase, so a restart does not reset it) before the step fails, classified."""
    state: S | None = None
    if ctx.phase_name in IN_FLIGHT and ctx.checkpoint.get("client_token") == token:
        state = await inspect()
        if state is not None and ctx.phase_name == "submitting":
            await ctx.phase("submitted", found_by_inspect=True)  # the call had gone through
        elif state is None and ctx.phase_name != "submitting":
            await ctx.note("not found after submit; submitting again with the same client token")
    else:
        await ctx.phase("submitting", client_token=token, **checkpoint)
    if state is None:
        await ctx.check_cancel()
        out = await submit()
        ctx.crash_point("after_call")
        await ctx.phase("submitted", **({"submit_result": out} if isinstance(out, dict) else {}))
        state = await inspect()
    if ctx.phase_name != "polling":
        await ctx.phase("polling", polling_since=ctx.clock.now().isoformat())
    while state is None or not done(state):
        _raise_if_late(ctx, timeout, what)
        await ctx.sleep(poll_every)
        state = await inspect()
    return state


def _raise_if_late(ctx: StepContext, timeout: float | None, what: str) -> None:
    since = ctx.checkpoint.get("polling_since")
    if timeout is None or not since:
        return
    waited = (ctx.clock.now() - datetime.fromisoformat(since)).total_seconds()
    if waited > timeout:
        raise CloudError(f"Waited {waited:.0f} s for {what} to finish (limit {timeout:.0f} s).",
                         code="wait_timed_out", retryable=False,
                         hint="Read the resource's state in the console or with describe; "
                              "retry this step to wait again once it moves.")
