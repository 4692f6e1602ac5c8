"""Waiting on EC2 the way AWS needs it: poll until a state is reached, and retry a call AWS
refuses while a dependency is still going away, both on the engine clock and with a deadline.

Sources: NAT gateways take minutes to become `available` (kops#944) and to be `deleted`
(aws-sdk#61); an Elastic IP cannot be released until its NAT is deleted (kops#1604,
grafiti#89); subnets, security groups, internet gateways and VPCs answer `DependencyViolation`
while ENIs, endpoints or NATs remain (cloud-nuke#293, terraform-provider-aws#9495).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext

T = TypeVar("T")
POLL = 15.0
FIRST_BACKOFF, MAX_BACKOFF = 5.0, 60.0


async def wait_until(ctx: StepContext, what: str, probe: Callable[[], Awaitable[bool]], *,
                     timeout: float, every: float = POLL, hint: str | None = None,
                     code: str = "network_timeout") -> None:
    """Poll `probe` until it is true; past `timeout` seconds, a clear non-retryable error."""
    deadline = ctx.clock.now() + timedelta(seconds=timeout)
    while not await probe():
        if ctx.clock.now() >= deadline:
            raise CloudError(f"Timed out after {timeout:.0f}s waiting for {what}.",
                             code=code, retryable=False,
                             hint=hint or "Look at the resource in the EC2 console, then retry "
                             "this step.")
        await ctx.sleep(every)


async def retry_dependency(ctx: StepContext, what: str, call: Callable[[], Awaitable[T]], *,
                           timeout: float) -> T:
    """Run `call`, retrying with backoff while AWS says a dependency remains (`cloud_dependency`),
    until `timeout` seconds have passed; then the last error stands."""
    deadline = ctx.clock.now() + timedelta(seconds=timeout)
    delay = FIRST_BACKOFF
    while True:
        try:
            return await call()
        except CloudError as err:
            if err.code != "cloud_dependency" or ctx.clock.now() >= deadline:
                raise
            await ctx.note(f"{what}: {err.message}; retrying in {delay:.0f}s")
            await ctx.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)
