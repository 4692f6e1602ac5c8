"""A short-lived cache of token and session look-ups, and the revocation signal.

Every authenticated request used to read the token row (and write last-used). The cache keeps
a positive answer for `TTL_SECONDS`; it never caches a refusal. Revocation and sign-out in this
process drop the entries at once and wake every stream the token holds (WebSockets, MCP
streams) so they close. Another replica notices within `TTL_SECONDS`: its entries expire, and
its open streams re-check the token every `TTL_SECONDS` (`until_revoked`). That is the bound.

Concurrent misses of one secret share one look-up (`once`): when an entry expires under load,
200 requests in flight made 200 token reads and 200 last-used writes, queued on the database,
and those requests were the multi-second tail of bench/profile_operations.py (issue 21).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from podplane.domain.principal import Principal

TTL_SECONDS = 5.0
MAX_ENTRIES = 10_000  # a flood of distinct valid secrets cannot grow memory without bound


@dataclass(frozen=True)
class _Entry:
    principal: Principal
    expires: float


@dataclass
class Lookups:
    """Per application (keyed by its session maker, so test apps never share one)."""

    clock: Callable[[], float] = time.monotonic
    entries: dict[str, _Entry] = field(default_factory=dict)
    watchers: dict[str, set[asyncio.Event]] = field(default_factory=dict)
    loading: dict[str, asyncio.Future[Principal]] = field(default_factory=dict)
    epoch: int = 0  # moves on every revocation: a look-up that began before it is not kept

    async def once(self, kind: str, secret: str,
                   load: Callable[[], Awaitable[Principal]]) -> Principal:
        """The cached principal, or one look-up shared by every concurrent miss of the secret
        (a refusal reaches them all and is not kept)."""
        found = self.get(kind, secret)
        if found is not None:
            return found
        key = _key(kind, secret)
        running = self.loading.get(key)
        if running is None:
            running = asyncio.ensure_future(self._load(kind, secret, load, self.epoch))
            self.loading[key] = running
            running.add_done_callback(lambda done: self._loaded(key, done))
        return await asyncio.shield(running)

    async def _load(self, kind: str, secret: str, load: Callable[[], Awaitable[Principal]],
                    epoch: int) -> Principal:
        principal = await load()
        if epoch == self.epoch:  # else a revocation happened meanwhile: answer, keep nothing
            self.put(kind, secret, principal)
        return principal

    def _loaded(self, key: str, done: asyncio.Future[Principal]) -> None:
        if self.loading.get(key) is done:
            del self.loading[key]
        if not done.cancelled():
            done.exception()  # retrieved: a refusal nobody awaited any more is not logged

    def get(self, kind: str, secret: str) -> Principal | None:
        key = _key(kind, secret)
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry.expires <= self.clock():
            self.entries.pop(key, None)
            return None
        return entry.principal

    def put(self, kind: str, secret: str, principal: Principal, ttl: float = TTL_SECONDS) -> None:
        if len(self.entries) >= MAX_ENTRIES:
            self.entries.clear()
        self.entries[_key(kind, secret)] = _Entry(principal, self.clock() + ttl)

    def drop(self, kind: str, secret: str) -> None:
        self.epoch += 1
        self.loading.pop(_key(kind, secret), None)
        self.entries.pop(_key(kind, secret), None)

    def revoked(self, token_id: str) -> None:
        """The token is gone: forget it and wake whoever streams with it."""
        self.epoch += 1
        self.loading.clear()  # a look-up already running may have read the row before
        for key in [k for k, e in self.entries.items() if e.principal.token_id == token_id]:
            del self.entries[key]
        for event in self.watchers.get(token_id, ()):
            event.set()

    @asynccontextmanager
    async def watching(self, token_id: str) -> AsyncIterator[asyncio.Event]:
        event = asyncio.Event()
        self.watchers.setdefault(token_id, set()).add(event)
        try:
            yield event
        finally:
            held = self.watchers.get(token_id, set())
            held.discard(event)
            if not held:
                self.watchers.pop(token_id, None)


_BY_APP: weakref.WeakKeyDictionary[Any, Lookups] = weakref.WeakKeyDictionary()


def lookups_of(sessions: Any) -> Lookups:
    found = _BY_APP.get(sessions)
    if found is None:
        found = _BY_APP[sessions] = Lookups()
    return found


def _key(kind: str, secret: str) -> str:
    # Only a digest is kept: the cache never holds a usable secret.
    return kind + ":" + hashlib.sha256(secret.encode()).hexdigest()
