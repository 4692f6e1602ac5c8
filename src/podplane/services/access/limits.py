"""Per token, in this process: a request rate and caps on what a token holds open.

A refusal is `RateLimited` (429); faces add `Retry-After` from its `retry_after`.
"""

from __future__ import annotations

import math
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from podplane.domain.errors import PodplaneError
from podplane.services.context import AppState


class RateLimited(PodplaneError):
    code, status, title = "rate_limited", 429, "Too many requests"


@dataclass
class TokenLimits:
    """Per token, in this process: a request rate (token bucket) and caps on what a token may
    hold open at once (long-poll waiters, WebSockets and MCP streams). Refusals are 429 with
    Retry-After. Values: Settings (PODPLANE_RATE_PER_SECOND, _RATE_BURST, _MAX_WAITERS,
    _MAX_STREAMS); docs/security.md lists the defaults."""

    rate: float
    burst: float
    caps: dict[str, int]
    clock: Callable[[], float] = time.monotonic
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    held: Counter[tuple[str, str]] = field(default_factory=Counter)
    refusals: RefusalWindows = field(default_factory=lambda: RefusalWindows())

    def admit(self, token_id: str) -> None:
        now = self.clock()
        level, last = self.buckets.get(token_id, (self.burst, now))
        level = min(self.burst, level + max(0.0, now - last) * self.rate)
        if level < 1.0:
            self.buckets[token_id] = (level, now)
            wait = math.ceil((1.0 - level) / self.rate)
            raise RateLimited(f"This token sent more than {self.rate:g} requests per second "
                              f"(bursts of {self.burst:g}).", hint=f"Retry after {wait} s.",
                              retry_after=wait)
        self.buckets[token_id] = (level - 1.0, now)

    @contextmanager
    def holding(self, kind: str, token_id: str) -> Iterator[None]:
        """One open waiter or stream of `kind` for the token, refused over its cap."""
        cap = self.caps[kind]
        if self.held[(kind, token_id)] >= cap:
            raise RateLimited(f"This token already holds {cap} open {kind}; close one first.",
                              hint=f"Retry after {HOLD_RETRY_AFTER} s.",
                              retry_after=HOLD_RETRY_AFTER)
        self.held[(kind, token_id)] += 1
        try:
            yield
        finally:
            self.held[(kind, token_id)] -= 1
            if self.held[(kind, token_id)] <= 0:
                del self.held[(kind, token_id)]


@dataclass
class RefusalWindows:
    """Which 429s get an audit row: the first per token and action in each window of
    `AUDIT_WINDOW_S` seconds; the rest are counted and named by the next row written for
    that token and action (`detail.coalesced`). A flood costs at most one write per token,
    action and second, and a table of at most `MAX_KEYS` counters (oldest windows go first)."""

    seen: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    def note(self, token_id: str, action: str, now: float) -> int | None:
        """None: coalesced into this window's row. Else: write a row naming this many
        refusals coalesced since the previous one."""
        key, window = (token_id, action), math.floor(now / AUDIT_WINDOW_S)
        last, skipped = self.seen.pop(key, (None, 0))
        if last == window:
            self.seen[key] = (window, skipped + 1)
            return None
        if len(self.seen) >= MAX_KEYS:  # dicts keep insertion order: drop the stalest
            del self.seen[next(iter(self.seen))]
        self.seen[key] = (window, 0)
        return skipped


AUDIT_WINDOW_S = 1.0
MAX_KEYS = 10_000
WAITERS, STREAMS = "waiters", "streams"
# A held waiter ends within the 50 s wait cap; most end much sooner.
HOLD_RETRY_AFTER = 5


_BY_APP: weakref.WeakKeyDictionary[Any, TokenLimits] = weakref.WeakKeyDictionary()


def limits_of(app: AppState) -> TokenLimits:
    """The application's limits (keyed by its session maker), made from its settings."""
    found = _BY_APP.get(app.sessions)
    if found is None:
        s = app.settings
        found = _BY_APP[app.sessions] = TokenLimits(
            s.rate_per_second, s.rate_burst, {WAITERS: s.max_waiters, STREAMS: s.max_streams})
    return found
