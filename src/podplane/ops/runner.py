"""The DB-leased runner: claims non-terminal operations, renews leases, resumes after crashes.

A lease is (lease_owner, lease_expires_at) on the operation row. lease_owner is a fencing
token fresh for every claim ("<host>:<pid>:<process id>/<claim id>"), not the process identity,
so an execution that outlived its claim (its lease expired and this same process, or another,
claimed the operation again) has every write refused. The runner claims an
operation whose lease is absent, expired, or held by a dead process on this host (so a
restart resumes at once instead of waiting for expiry), with a compare-and-swap UPDATE.
A heartbeat renews the leases; an execution that loses its lease is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from datetime import UTC, datetime, timedelta

from podplane.ops.clock import Clock, RealClock
from podplane.ops.execute import Engine, Execution
from podplane.store import operations as repo

log = logging.getLogger("podplane.ops")
HOST = socket.gethostname()
# Owners alive in this process (tests and tools may run several engines side by side).
_LIVE: set[str] = set()


def new_owner_id() -> str:
    owner = f"{HOST[:32]}:{os.getpid()}:{secrets.token_hex(4)}"  # with a claim: < 64 chars
    _LIVE.add(owner)
    return owner


def new_claim(owner: str) -> str:
    """The fencing token of one claim by `owner`."""
    return f"{owner}/{secrets.token_hex(4)}"


def process_of(lease_owner: str) -> str:
    return lease_owner.split("/", 1)[0]


def owner_is_dead(owner: str) -> bool:
    """True only when we can tell for sure: same host and the process is gone."""
    host, _, rest = owner.partition(":")
    pid_text = rest.split(":", 1)[0]
    if host != HOST[:32] or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():  # an earlier incarnation that had our pid (pid 1 in a container)
        return process_of(owner) not in _LIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class Runner:
    def __init__(self, engine: Engine, *, lease_seconds: float = 30.0, scan_every: float = 5.0,
                 lease_clock: Clock | None = None) -> None:
        self.engine = engine
        self.lease = timedelta(seconds=max(3.0, lease_seconds))
        self.scan_every = scan_every
        self.lease_clock = lease_clock or RealClock()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._claims: dict[str, str] = {}  # op id -> the fencing token of our claim
        self._cooldown: dict[str, datetime] = {}
        self._background: list[asyncio.Task[None]] = []
        self._kick: asyncio.Event | None = None
        self._stopping: asyncio.Event | None = None

    @property
    def owner(self) -> str:
        return self.engine.owner

    @property
    def running(self) -> set[str]:
        return set(self._tasks)

    async def start(self) -> None:
        self._kick, self._stopping = asyncio.Event(), asyncio.Event()
        self._background = [asyncio.create_task(self._scan_loop()),
                            asyncio.create_task(self._heartbeat_loop())]

    def kick(self) -> None:
        """Look for work now (a new, retried or cancelled operation)."""
        if self._kick is not None:
            self._kick.set()

    async def drain(self) -> None:
        """Wait until no execution is in flight (tests, orderly shutdown)."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def stop(self) -> None:
        # Loops stop at their wait points, never inside a transaction: a cancel in the middle of
        # an aiosqlite write can leave the connection holding SQLite's write lock.
        if self._stopping is not None:
            self._stopping.set()
            self.kick()
        for task in self._background:
            with contextlib.suppress(BaseException):
                await task
        executions = list(self._tasks.values())
        for task in executions:
            task.cancel()  # an execution stopped mid-step resumes from its persisted phase
        for task in executions:
            with contextlib.suppress(BaseException):
                await task
        self._background, self._kick, self._stopping = [], None, None
        async with self.engine.sessions.begin() as db:
            await repo.release_all(db, self.owner)  # let the next process resume at once
        _LIVE.discard(self.owner)

    async def scan_once(self) -> list[str]:
        now = self.lease_clock.now()
        async with self.engine.sessions() as db:
            rows = await repo.claimable(db, self.engine.workflows.kinds())
        claimed = []
        for op_id, owner, expires in rows:
            if op_id in self._tasks or not self._takeable(op_id, owner, expires, now):
                continue
            claim = new_claim(self.owner)
            async with self.engine.sessions.begin() as db:
                if not await repo.claim(db, op_id, owner, claim, now + self.lease):
                    continue
            self._claims[op_id] = claim
            self._tasks[op_id] = asyncio.create_task(self._drive(op_id, claim))
            claimed.append(op_id)
        return claimed

    def _takeable(self, op_id: str, owner: str | None, expires: datetime | None,
                  now: datetime) -> bool:
        if op_id in self._cooldown and self._cooldown[op_id] > now:
            return False
        if owner is None or process_of(owner) == self.owner:
            return True  # ours from an earlier claim whose execution has ended
        if expires is None or _aware(expires) < now:
            return True
        return owner_is_dead(owner)

    async def _drive(self, op_id: str, claim: str) -> None:
        try:
            await Execution(self.engine, op_id, lease=claim).run()
        except Exception:  # e.g. the database went away: back off, then let a scan retry
            log.exception("operation %s: execution error; will retry", op_id)
            self._cooldown[op_id] = self.lease_clock.now() + timedelta(seconds=self.scan_every)
        finally:
            self._tasks.pop(op_id, None)
            self._claims.pop(op_id, None)
            self.engine.notifier.notify(op_id)
            self.kick()  # a retry may have arrived while we were finishing

    async def _scan_loop(self) -> None:
        assert self._kick is not None and self._stopping is not None
        while not self._stopping.is_set():
            self._kick.clear()
            try:
                await self.scan_once()
            except Exception:
                log.exception("operations scan failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), timeout=self.scan_every)

    async def _heartbeat_loop(self) -> None:
        assert self._stopping is not None
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.lease.total_seconds() / 3)
                return
            try:
                await self.renew_once()
            except Exception:
                log.exception("lease renewal failed")

    async def renew_once(self) -> None:
        claims = dict(self._claims)
        held = list(claims)
        expires = self.lease_clock.now() + self.lease
        async with self.engine.sessions.begin() as db:
            still = await repo.renew(db, claims, expires)
        for lost in set(held) - still:
            task = self._tasks.get(lost)
            if task is not None:
                log.warning("operation %s: lease taken by another process; stopping", lost)
                task.cancel()


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo else at.replace(tzinfo=UTC)
