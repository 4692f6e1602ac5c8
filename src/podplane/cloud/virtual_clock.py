"""Engine clocks that follow the sandbox's virtual clock (a Clock port adapter over HTTP).

- `PacedClock` (for `podplane up`): a sleep of N virtual seconds waits N / speed real seconds,
  so polling keeps pace with a sandbox that runs 60x faster than real time.
- `SteppingClock` (for tests): a sleep advances the sandbox clock by N seconds and returns,
  so a 20-minute cluster creation takes no real time and nothing waits on the wall clock.
  Idling (a waiter's pause, ops/clock.py) leaves the sandbox's time alone: it moves only with
  the work, so the same steps end the same way whatever the machine's load.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from podplane.cloud.sandbox_secret import control_headers, sandbox_secret

MIN_REAL_SLEEP = 0.05
IDLE_REAL_PER_SECOND = 0.05  # a stepping waiter's real pause per virtual second it idles


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


class SteppingClock:
    def __init__(self, sandbox_url: str, secret: str | None = None) -> None:
        self.url = sandbox_url.rstrip("/")
        self.headers = control_headers(secret or sandbox_secret())
        self._now = datetime.now(UTC)
        self._http: httpx.AsyncClient | None = None

    def now(self) -> datetime:
        """Moves with every sleep, so timeouts measured on this clock expire."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        if self._http is None:  # one client: a new one per sleep costs an SSL context each
            self._http = httpx.AsyncClient(timeout=10.0, headers=self.headers)
        r = await self._http.post(f"{self.url}/_sandbox/clock/advance",
                                  json={"seconds": seconds})
        r.raise_for_status()
        self._now += timedelta(seconds=max(0.0, seconds))
        await asyncio.sleep(0)

    async def idle(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) * IDLE_REAL_PER_SECOND)
