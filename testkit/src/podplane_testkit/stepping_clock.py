"""The tests' engine clock (a Clock port adapter over the sandbox's control API): a sleep
advances the sandbox clock by N seconds and returns, so a 20-minute cluster creation takes no
real time and nothing waits on the wall clock. Idling (a waiter's pause, ops/clock.py) leaves
the sandbox's time alone: it moves only with the work, so the same steps end the same way
whatever the machine's load."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx

from podplane.cloud.sandbox_secret import control_headers, sandbox_secret

IDLE_REAL_PER_SECOND = 0.05  # a stepping waiter's real pause per virtual second it idles


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
