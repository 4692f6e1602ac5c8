"""The engine clock that follows the sandbox's virtual clock (a Clock port adapter over HTTP).

`PacedClock` (for `podplane up`): a sleep of N virtual seconds waits N / speed real seconds, so
polling keeps pace with a sandbox that runs 60x faster than real time. The tests' clock, which
steps the sandbox instead, is `podplane_testkit.stepping_clock.SteppingClock`.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import httpx

from podplane.cloud.sandbox_secret import control_headers, sandbox_secret

MIN_REAL_SLEEP = 0.05


class PacedClock:
    def __init__(self, sandbox_url: str, sandbox_dir: Path | None = None) -> None:
        self.url = sandbox_url.rstrip("/")
        self.sandbox_dir = sandbox_dir  # where the sandbox's env file (with its secret) lives
        self._speed: float | None = None

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        speed = await self._read_speed()
        real = seconds / speed if speed > 0 else seconds
        await asyncio.sleep(max(MIN_REAL_SLEEP, real))

    async def idle(self, seconds: float) -> None:
        """A waiter's pause is a person's or an agent's: real seconds, whatever the speed."""
        await asyncio.sleep(max(0.0, seconds))

    async def _read_speed(self) -> float:
        try:
            # read each time: a sandbox started after us writes its secret then
            headers = control_headers(sandbox_secret(self.sandbox_dir))
            async with httpx.AsyncClient(timeout=2.0, headers=headers) as http:
                self._speed = float((await http.get(f"{self.url}/_sandbox/clock")).json()["speed"])
        except (httpx.HTTPError, KeyError, ValueError):
            pass  # keep the last known speed; the sandbox may be restarting
        return self._speed or 1.0
