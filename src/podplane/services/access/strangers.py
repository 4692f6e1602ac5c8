"""Callers nobody recognised (issue 34, S4): an unknown token or an expired session costs a
database read and an audit row, so a flood of them must not cost one each.

- Each client address has a budget of failed authentications (a token bucket:
  PODPLANE_STRANGER_RATE_PER_SECOND, _STRANGER_BURST). While it is spent, that address's
  requests are refused with 429 *before* the token is looked up, unless the token is one the
  look-up cache already knows as valid (a client that works keeps working).
- Their refusals are audited like 429s: the first per address and action each second gets a
  row, the rest are counted into the next one (`detail.coalesced`).
Both tables are bounded (oldest addresses go first).
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from podplane.services.access.limits import MAX_KEYS, RateLimited, RefusalWindows
from podplane.services.context import AppState


@dataclass
class Strangers:
    rate: float
    burst: float
    clock: Callable[[], float] = time.monotonic
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    refusals: RefusalWindows = field(default_factory=RefusalWindows)

    def _level(self, address: str) -> tuple[float, float]:
        now = self.clock()
        level, last = self.buckets.get(address, (self.burst, now))
        return min(self.burst, level + max(0.0, now - last) * self.rate), now

    def check(self, address: str) -> None:
        """Refuse before any look-up while the address has no failures left to spend."""
        level, _ = self._level(address)
        if level < 1.0:
            wait = max(1, math.ceil((1.0 - level) / self.rate))
            raise RateLimited("Too many failed authentications from this address.",
                              hint=f"Retry after {wait} s with a valid token.",
                              retry_after=wait)

    def failed(self, address: str) -> None:
        level, now = self._level(address)
        self.buckets.pop(address, None)
        if len(self.buckets) >= MAX_KEYS:
            del self.buckets[next(iter(self.buckets))]
        self.buckets[address] = (max(0.0, level - 1.0), now)


_BY_APP: weakref.WeakKeyDictionary[Any, Strangers] = weakref.WeakKeyDictionary()


def strangers_of(app: AppState) -> Strangers:
    found = _BY_APP.get(app.sessions)
    if found is None:
        s = app.settings
        found = _BY_APP[app.sessions] = Strangers(s.stranger_rate_per_second, s.stranger_burst)
    return found
