"""One cloud read per resource per interval, however many watch.

A read-through cache keyed by resource (("hyperpod", "nodes", cluster), ("kube", eks, ...)):
- single flight: concurrent readers of a key share one in-flight cloud call;
- adaptive interval: a value is served for `fast` seconds while the resource is changing and
  for `slow` seconds once it has not changed for `idle_after` seconds;
- past its interval a value is still served (for up to `stale_for` more seconds) while one
  background read refreshes it, so readers never wait on the cloud for a resource they watch;
  after our own write (`invalidate`) the next reader waits for the new answer instead;
- each key has a version that moves when a read returns something different, and waiters
  (`changed`) are woken when any of their keys moves;
- a key nobody has read for `forget_after` seconds is dropped, so a server that has shown many
  jobs, nodes and prefixes over days keeps only what is still looked at. Versions come from one
  counter for the whole cache: a key read again after being dropped never repeats a version.
With `fast == 0` nothing is retained: only the single flight remains (the test suite's mode,
where the sandbox's clock, not ours, decides when the cloud changes).

Read-your-writes (ADR 0013): the engine calls `fence()` before it records a step's or an
operation's end. Every entry carries the epoch it was read in; one read in an older epoch is
neither served nor stored, so no read after an operation reported its end answers from what
was read before its changes. Across replicas (`fence_source`: the database's write fence),
each read first learns the fence with a query begun after it arrived (`sync`).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import os
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from podplane.domain.errors import NotFound

Key = tuple[Hashable, ...]
FAST_ENV, SLOW_ENV = "PODPLANE_OBSERVE_SECONDS", "PODPLANE_OBSERVE_IDLE_SECONDS"
WATCH_ENV = "PODPLANE_OBSERVE_WATCH"  # "0": list Nodes and Pods each interval, never watch


@dataclass
class Entry:
    value: Any = None
    has_value: bool = False
    version: int = 0
    fetched_at: float = 0.0
    changed_at: float = 0.0
    read_at: float = 0.0
    generation: int = 0  # moves on invalidate: a read begun before our write is not kept
    epoch: int = 0  # the cache's epoch when the value's read began (ADR 0013)
    inflight: asyncio.Future[Any] | None = None


@dataclass
class ObservationCache:
    fast: float = 2.0
    slow: float = 10.0
    idle_after: float = 60.0
    stale_for: float = 10.0
    forget_after: float = 300.0
    clock: Callable[[], float] = time.monotonic
    reads: int = 0  # cloud calls made (each shared by every concurrent reader)
    watch_kube: bool = True  # Node and Pod lists kept by a watch (informer.py)
    # Errors that answer the read ("no such kind": a CRD not installed) are kept for the
    # interval like a value; any other error reaches its readers and the next read retries.
    kept_errors: tuple[type[Exception], ...] = ()
    entries: dict[Key, Entry] = field(default_factory=dict)
    on_invalidate: list[Callable[[Key], None]] = field(default_factory=list)
    _moved: asyncio.Condition | None = None
    _versions: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _next_sweep: float = float("-inf")
    epoch: int = 0  # moved by `fence`: entries read in an older epoch are not served
    # Other replicas' writes: the database's write fence, read by `sync` (None: one process).
    fence_source: Callable[[], Awaitable[int]] | None = None
    _mark: int | None = None
    _next_sync: asyncio.Future[None] | None = None
    _sync_lock: asyncio.Lock | None = None

    @classmethod
    def from_env(cls) -> ObservationCache:
        fast = float(os.environ.get(FAST_ENV, "2"))
        slow = max(fast, float(os.environ.get(SLOW_ENV, "10")))
        # a console polling every 2-10 s is answered at once; a step polling every 12 s or
        # more always waits for a fresh read (its own pace, not ours)
        return cls(fast=fast, slow=slow, stale_for=slow,
                   watch_kube=os.environ.get(WATCH_ENV, "1") != "0", kept_errors=(NotFound,))

    @property
    def watching(self) -> bool:
        """Watches only where values are retained (not in the test suite's mode)."""
        return self.fast > 0 and self.watch_kube

    def interval(self, entry: Entry, now: float) -> float:
        """Fast while the resource changes, slow once it has been still for a while."""
        return self.fast if now - entry.changed_at < self.idle_after else self.slow

    def fresh(self, entry: Entry, now: float) -> bool:
        return entry.has_value and self.fast > 0 and \
            now - entry.fetched_at < self.interval(entry, now)

    def servable(self, entry: Entry, now: float) -> bool:
        """Stale but recent enough to answer while a background read refreshes it."""
        return entry.has_value and self.fast > 0 and \
            now - entry.fetched_at < self.interval(entry, now) + self.stale_for

    async def read(self, key: Key, fetch: Callable[[], Awaitable[Any]]) -> Any:
        await self.sync()
        now = self.clock()
        if now >= self._next_sweep:
            self._sweep(now)
        entry = self.entries.get(key) or self.entries.setdefault(key, Entry(epoch=self.epoch))
        entry.read_at = now
        if entry.epoch < self.epoch:  # read before a write of ours: neither served nor joined
            self._expire(entry, now)
            entry.epoch = self.epoch
        if self.fresh(entry, now):
            return _answer(entry.value)
        if entry.inflight is None:
            entry.inflight = asyncio.ensure_future(self._fetch(entry, fetch, entry.generation))
            entry.inflight.add_done_callback(_quiet)  # a failed refresh: the next read retries
        if self.servable(entry, now):
            return _answer(entry.value)
        # shield: one reader going away (client disconnect) must not cancel the others' read
        return await asyncio.shield(entry.inflight)

    async def _fetch(self, entry: Entry, fetch: Callable[[], Awaitable[Any]],
                     generation: int) -> Any:
        """`generation` as the read was asked for: a fence or an invalidate before this task
        first runs must still drop its answer."""
        mine = asyncio.current_task()
        try:
            self.reads += 1
            try:
                value = await fetch()
            except self.kept_errors as err:  # "there is none": an answer, kept like a value
                if generation == entry.generation:
                    self._store(entry, Absent(type(err), str(err), err))
                raise
            if generation == entry.generation:
                self._store(entry, value)
            return value
        finally:
            if entry.inflight is mine:
                entry.inflight = None

    def _store(self, entry: Entry, value: Any) -> None:
        now = self.clock()
        if not entry.has_value or value != entry.value:
            entry.version = next(self._versions)
            entry.changed_at = now
            entry.value, entry.has_value = value, True  # unchanged: keep the old object, so
            self._wake()                                # what was derived from it stays valid
        entry.fetched_at = now

    def _sweep(self, now: float) -> None:
        """Drop keys not read for `forget_after` seconds (none with a read in flight)."""
        self._next_sweep = now + self.forget_after / 10
        for key in [k for k, e in self.entries.items()
                    if e.inflight is None and now - e.read_at > self.forget_after]:
            del self.entries[key]

    def version(self, key: Key) -> int:
        entry = self.entries.get(key)
        return entry.version if entry else 0

    def versions(self, keys: Iterable[Key]) -> tuple[int, ...]:
        return tuple(self.version(k) for k in keys)

    def invalidate(self, *prefix: Hashable) -> None:
        """Forget retained values under a key prefix (after we changed that resource)."""
        n, now = len(prefix), self.clock()
        for key, entry in self.entries.items():
            if key[:n] == prefix:
                self._expire(entry, now)
        for listener in self.on_invalidate:
            listener(prefix)

    @staticmethod
    def _expire(entry: Entry, now: float) -> None:
        entry.fetched_at, entry.changed_at = float("-inf"), now
        entry.generation += 1  # a read in flight is not kept, nor joined
        entry.inflight = None

    def fence(self) -> None:
        """A write of ours is about to be recorded as done: nothing read before this moment
        is served again (entries are expired lazily, by epoch; watched lists list again)."""
        self.epoch += 1
        for listener in self.on_invalidate:
            listener(())

    async def sync(self) -> None:
        """With other replicas: learn the database's write fence from a query begun after
        this call (concurrent readers share one), and fence if it moved. A failed query
        fences too: never serve what may be stale."""
        if self.fence_source is None:
            return
        if self._next_sync is None:
            self._next_sync = asyncio.get_running_loop().create_future()
            asyncio.ensure_future(self._run_sync(self._next_sync))
        await asyncio.shield(self._next_sync)

    async def _run_sync(self, done: asyncio.Future[None]) -> None:
        if self._sync_lock is None:
            self._sync_lock = asyncio.Lock()
        async with self._sync_lock:  # one query at a time; it begins after its readers came
            if self._next_sync is done:
                self._next_sync = None
            assert self.fence_source is not None
            try:
                mark: int | None = await self.fence_source()
            except Exception:  # noqa: BLE001 - the database is the views' problem, not ours
                mark = None
            if mark is None or mark != self._mark:
                self._mark = mark
                self.fence()
            done.set_result(None)

    async def changed(self, keys: list[Key], since: tuple[int, ...], timeout: float) -> bool:
        """Wait until one of `keys` moved past `since` (True) or the timeout (False)."""
        cond = self._condition()
        async with cond:
            try:
                await asyncio.wait_for(
                    cond.wait_for(lambda: self.versions(keys) != since), timeout)
            except TimeoutError:
                return False
        return True

    def _condition(self) -> asyncio.Condition:
        if self._moved is None:
            self._moved = asyncio.Condition()
        return self._moved

    def _wake(self) -> None:
        cond = self._moved
        if cond is None:
            return

        async def notify() -> None:
            async with cond:
                cond.notify_all()

        asyncio.ensure_future(notify())


@dataclass(frozen=True)
class Absent:
    """A kept error answer, compared by what it says (so an unchanged one keeps its version)."""

    kind: type[Exception]
    message: str
    error: Exception = field(compare=False)


def _answer(value: Any) -> Any:
    if isinstance(value, Absent):  # a copy each time: one raised object would grow its
        raise copy.copy(value.error).with_traceback(None)  # traceback with every reader's
    return value


def _quiet(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved, so asyncio does not log it as never retrieved
