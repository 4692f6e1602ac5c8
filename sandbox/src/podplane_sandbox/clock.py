"""The sandbox's virtual clock: real time scaled by a speed factor, plus stepped advances.

virtual_now = base_virtual + (real_now - base_real) * speed + advanced
Speed 0 freezes time (tests step it with advance()). Sleepers wake when virtual time
reaches their deadline, whether real time or an advance moved it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

EPOCH_START = 1_780_000_000.0  # a fixed virtual start so seeded runs are reproducible


class VirtualClock:
    def __init__(self, speed: float = 1.0, start: float = EPOCH_START,
                 real: Callable[[], float] = time.monotonic) -> None:
        self._real = real
        self._lock = threading.Lock()
        self._base_virtual = start
        self._base_real = real()
        self._speed = speed
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> float:
        with self._lock:
            return self._base_virtual + (self._real() - self._base_real) * self._speed

    @property
    def speed(self) -> float:
        return self._speed

    def set_speed(self, speed: float) -> None:
        if speed < 0:
            raise ValueError("speed must be >= 0")
        with self._lock:
            self._rebase()
            self._speed = speed
        self._notify()

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self._lock:
            self._rebase()
            self._base_virtual += seconds
        self._notify()
        return self.now()

    def set_now(self, virtual: float) -> None:
        """Restore a persisted clock (sandbox restart); never moves backwards."""
        with self._lock:
            self._rebase()
            self._base_virtual = max(self._base_virtual, virtual)

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    async def sleep(self, seconds: float) -> None:
        """Sleep in virtual seconds; wakes early on advance()."""
        deadline = self.now() + seconds
        changed = asyncio.Event()
        loop = asyncio.get_running_loop()

        def listener() -> None:
            loop.call_soon_threadsafe(changed.set)

        self._listeners.append(listener)
        try:
            while (left := deadline - self.now()) > 0:
                changed.clear()
                real_left = left / self._speed if self._speed > 0 else 3600.0
                try:
                    await asyncio.wait_for(changed.wait(), timeout=min(real_left, 1.0))
                except TimeoutError:
                    pass
        finally:
            self._listeners.remove(listener)

    def _rebase(self) -> None:
        now_real = self._real()
        self._base_virtual += (now_real - self._base_real) * self._speed
        self._base_real = now_real

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()
