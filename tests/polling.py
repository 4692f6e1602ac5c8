"""How a test waits by reading (ADR 0014): at most every POLL_SECONDS, with a deadline.

A test of the stepping sandbox reads the operation instead of long-polling it when the wait must
not move virtual time itself (the engine's own sleeps step the clock; a long-poll's slices would
step it too). Reading every 20 ms cost about 240 requests per cluster create; every 0.2 s, the
same create ends the same way with about 45, and the wait ends at most 0.2 s later.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
POLL_SECONDS = 0.2


async def poll(read: Callable[[], Awaitable[T]], done: Callable[[T], bool], what: str,
               seconds: float = 120,
               sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> T:
    """`read()` until `done` holds; fails naming `what` and the last value after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = await read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: {value}")
        await sleep(POLL_SECONDS)
