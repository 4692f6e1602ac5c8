"""The engine's Clock port: what time it is and how to wait.

Steps sleep (backoff, polling) through this port, so tests inject a ManualClock and never
wait on real time. Leases between processes always use wall-clock time (RealClock).

`sleep` is work's pause (a step polling the cloud); `idle` is a waiter's (a long-poll on an
operation). They differ only on a clock that steps a simulated cloud on sleep: a waiter must
not move that cloud's time, or how far it moves depends on how the waiter and the work race.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None: ...

    async def idle(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    async def idle(self, seconds: float) -> None:
        await self.sleep(seconds)


class ManualClock:
    """Virtual time for tests and simulations.

    auto=True: sleep() moves time forward at once (a sleep costs no real time).
    auto=False: sleep() blocks until advance() moves time past the sleeper's deadline.
    """

    def __init__(self, start: datetime | None = None, *, auto: bool = True) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self.auto = auto
        self._moved = asyncio.Condition()

    def now(self) -> datetime:
        return self._now

    async def sleep(self, seconds: float) -> None:
        deadline = self._now + timedelta(seconds=max(0.0, seconds))
        if self.auto:
            self._now = max(self._now, deadline)
            await asyncio.sleep(0)
            return
        async with self._moved:
            await self._moved.wait_for(lambda: self._now >= deadline)

    async def idle(self, seconds: float) -> None:
        await self.sleep(seconds)  # one loop, no simulated cloud: nothing races

    async def advance(self, seconds: float) -> None:
        async with self._moved:
            self._now += timedelta(seconds=seconds)
            self._moved.notify_all()
