"""Operation change notifications: waiters (long-poll, WebSocket, MCP operation_wait) sleep
until the engine says their operation changed, instead of each reading the database on a timer.

- In-process: the engine calls `notify(op_id)` after every write it commits.
- Between processes (PostgreSQL, HA replicas): `notify` also sends `NOTIFY podplane_ops`, and
  each process LISTENs on a connection of its own and wakes its local waiters
  (https://www.postgresql.org/docs/current/sql-notify.html). On SQLite there is one writer
  process, so the in-process signal is the whole story.
- Waiters woken by the same change share one database read (`read`, single flight per change).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

CHANNEL = "podplane_ops"
# A kept list page is dropped at the next change of any operation, and after this long anyway
# (a change this process was not told about: another writer without LISTEN).
# PODPLANE_OPS_PAGE_SECONDS=0 keeps none (the benches compare both in one run).
PAGE_TTL_SECONDS = float(os.environ.get("PODPLANE_OPS_PAGE_SECONDS", "1"))
PAGES_KEPT = 256
T = TypeVar("T")
log = logging.getLogger("podplane.ops.notify")


class Notifier:
    def __init__(self) -> None:
        self._events: dict[str, set[asyncio.Event]] = defaultdict(set)
        self._seq: dict[str, int] = defaultdict(int)  # changes seen per operation
        self._reads: dict[str, tuple[int, asyncio.Future[Any]]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._publish: Callable[[str], Awaitable[None]] | None = None
        self.db_reads = 0  # operation reads made on behalf of waiters (shared per change)
        self.generation = 0  # moves on every change of any operation
        self._pages: dict[Any, tuple[int, float, Any]] = {}
        self._loading: dict[Any, tuple[int, asyncio.Future[Any]]] = {}

    def notify(self, op_id: str) -> None:
        self._wake(op_id)
        if self._publish is not None:
            task = asyncio.ensure_future(self._publish(op_id))
            task.add_done_callback(_log_failure)

    def _wake(self, op_id: str) -> None:
        self.generation += 1
        self._seq[op_id] += 1
        for event in list(self._events.get(op_id, ())):
            event.set()

    def subscribe(self, op_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self._events[op_id].add(event)
        return event

    def unsubscribe(self, op_id: str, event: asyncio.Event) -> None:
        waiters = self._events.get(op_id)
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                del self._events[op_id]
                self._seq.pop(op_id, None)

    async def read(self, op_id: str, load: Callable[[], Awaitable[T]]) -> T:
        """One read per change, shared by every waiter of `op_id`: a read begun before the
        latest notification is not reused (it may predate the change)."""
        seq = self._seq[op_id] if op_id in self._events else -1
        current = self._reads.get(op_id)
        if seq < 0 or current is None or current[0] != seq or current[1].done():
            future: asyncio.Future[Any] = asyncio.ensure_future(self._load(load))
            current = (seq, future)
            if seq >= 0:
                self._reads[op_id] = current
                future.add_done_callback(lambda f: self._forget(op_id, f))
        return await asyncio.shield(current[1])

    async def page(self, key: Any, load: Callable[[], Awaitable[T]]) -> T:
        """A list of operations, kept until any operation changes (or PAGE_TTL_SECONDS): a
        console polling the list costs no database read while nothing happens."""
        if PAGE_TTL_SECONDS <= 0:
            return await load()
        hit, now = self._pages.get(key), time.monotonic()
        if hit is not None and hit[0] == self.generation and now - hit[1] < PAGE_TTL_SECONDS:
            return hit[2]  # type: ignore[no-any-return]
        generation = self.generation  # a change during the read makes this page stale at once
        running = self._loading.get(key)
        if running is None or running[0] != generation:  # one read per page per change
            running = (generation, asyncio.ensure_future(load()))
            self._loading[key] = running
            running[1].add_done_callback(lambda f: self._keep(key, generation, now, f))
        return await asyncio.shield(running[1])

    def _keep(self, key: Any, generation: int, at: float, done: asyncio.Future[Any]) -> None:
        if self._loading.get(key, (None, None))[1] is done:
            del self._loading[key]
        if done.cancelled() or done.exception() is not None:
            return
        if len(self._pages) >= PAGES_KEPT:
            self._pages.clear()
        self._pages[key] = (generation, at, done.result())

    async def _load(self, load: Callable[[], Awaitable[T]]) -> T:
        self.db_reads += 1
        return await load()

    def _forget(self, op_id: str, future: asyncio.Future[Any]) -> None:
        if (entry := self._reads.get(op_id)) is not None and entry[1] is future:
            del self._reads[op_id]

    # -- between processes (PostgreSQL) --------------------------------------------------------

    async def connect(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        """LISTEN when the database is PostgreSQL; nothing to do on SQLite."""
        bind = sessions.kw.get("bind")
        url = getattr(bind, "url", None)
        if url is None or not url.drivername.startswith("postgresql"):
            return
        import psycopg  # only with PostgreSQL (the `postgres` extra)

        dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
        listen = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        await listen.execute(f"LISTEN {CHANNEL}")
        # a second connection: a connection waiting in notifies() holds its lock
        send = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        self._listener = asyncio.create_task(self._listen(listen, send))

        async def publish(op_id: str) -> None:
            await send.execute("SELECT pg_notify(%s, %s)", (CHANNEL, op_id))
        self._publish = publish

    async def _listen(self, listen: Any, send: Any) -> None:
        try:
            async for note in listen.notifies():
                self._wake(note.payload)
        finally:
            self._publish = None
            for conn in (listen, send):
                with contextlib.suppress(Exception):
                    await conn.close()

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
            self._listener = None

    @property
    def listening(self) -> bool:
        return self._listener is not None and not self._listener.done()


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("NOTIFY failed (other replicas see the change at their next re-read): %s",
                    task.exception())
