"""The engine as the process sees it, and the only door services use: start, read, list, wait,
retry a step, cancel. Services never read the engine's tables (store.operations) themselves.

Built once per app by the composition root with that app's workflows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from podplane.ops import control, starting
from podplane.ops.clock import Clock, RealClock
from podplane.ops.context import PointHook
from podplane.ops.execute import Engine
from podplane.ops.notify import Notifier
from podplane.ops.runner import Runner, new_owner_id
from podplane.ops.views import Operation
from podplane.ops.workflows import Workflows
from podplane.store import operations as repo

# What a start may write in the operation's own transaction (part of the engine's API).
Also = starting.Also

LEASE_ENV = "PODPLANE_OPS_LEASE_SECONDS"


@dataclass
class OpsEngine:
    sessions: async_sessionmaker[AsyncSession]
    clock: Clock
    notifier: Notifier
    runner: Runner
    workflows: Workflows

    @classmethod
    def build(cls, sessions: async_sessionmaker[AsyncSession], clock: Clock | None = None,
              backoff_base: float = 2.0, *, workflows: Workflows | None = None,
              on_point: PointHook | None = None) -> OpsEngine:
        clock = clock or RealClock()
        flows = workflows if workflows is not None else Workflows()
        notifier = Notifier()
        core = Engine(sessions=sessions, clock=clock, notifier=notifier, owner=new_owner_id(),
                      workflows=flows, backoff_base=backoff_base, on_point=on_point)
        lease = float(os.environ.get(LEASE_ENV, "30"))
        return cls(sessions, clock, notifier, Runner(core, lease_seconds=lease), flows)

    async def start(self) -> None:
        await self.notifier.connect(self.sessions)  # LISTEN on PostgreSQL
        await self.runner.start()

    async def stop(self) -> None:
        await self.runner.stop()
        await self.notifier.close()

    def changed(self, op_id: str) -> None:
        """Tell watchers and the runner that an operation changed outside an execution."""
        self.notifier.notify(op_id)
        self.runner.kick()

    # -- what services call ---------------------------------------------------------------

    async def begin(self, kind: str, target: str, params: dict[str, Any], *, key: str | None,
                    face: str, principal: str,
                    also: Also | None = None) -> Operation:
        """Create the operation (or find the one this idempotency key made) and wake the
        runner. Raises IdempotencyMismatch or TargetBusy. `also(db, op_id)` writes the
        service's own rows in the same transaction (nothing is written when refused)."""
        op_id, created = await starting.create(
            self.sessions, self.clock, self.workflows, kind=kind, target=target, params=params,
            key=key, face=face, principal=principal, also=also)
        if created:
            self.changed(op_id)
        return await self.read(op_id, history=False)

    def fence_views(self, told: Callable[[], None]) -> None:
        """Call `told` before every step's and operation's end is written (ADR 0013)."""
        self.runner.engine.fences.append(told)

    async def fence_mark(self) -> int:
        """The database's write fence: moved by every step and operation end, on any
        replica."""
        async with self.sessions() as db:
            return await repo.fence_mark(db)

    @property
    def shared(self) -> bool:
        """Whether other replicas may write to this database (PostgreSQL)."""
        url = getattr(self.sessions.kw.get("bind"), "url", None)
        return url is not None and url.drivername.startswith("postgresql")

    async def key_used(self, key: str) -> bool:
        """True when an operation was already started with this idempotency key."""
        return await self.params_of_key(key) is not None

    async def params_of_key(self, key: str) -> dict[str, Any] | None:
        """The parameters of the operation started with this idempotency key, if any."""
        async with self.sessions() as db:
            row = await repo.by_key(db, key)
        return None if row is None else dict(row.params)

    async def last_succeeded(self, kind: str, target: str,
                             about: Callable[[dict[str, Any]], bool] | None = None
                             ) -> tuple[str, dict[str, Any]] | None:
        """The id and parameters of the newest succeeded `kind` operation on `target` (what
        made the object there) whose parameters are `about` it, among the newest 50; or
        None. (An instance group's add is keyed by its cluster: `about` picks the group.)"""
        async with self.sessions() as db:
            rows = await repo.page(db, limit=1 if about is None else 50, before=None,
                                   status="succeeded", kind=kind, target=target)
        found = next((r for r in rows if about is None or about(dict(r.params))), None)
        return None if found is None else (found.id, dict(found.params))

    async def read(self, op_id: str, *, history: bool = True) -> Operation:
        return await control.read(self, op_id, history=history)

    async def page(self, *, status: str | None, kind: str | None, target: str | None,
                   limit: int, cursor: str | None,
                   history: bool) -> tuple[list[Operation], str | None]:
        return await control.page(self, status=status, kind=kind, target=target, limit=limit,
                                  cursor=cursor, history=history)

    async def wait(self, op_id: str, timeout: float, revision: int | None = None) -> Operation:
        return await control.wait(self, op_id, timeout, revision)

    async def retry_step(self, op_id: str, step: str, by: str) -> Operation:
        return await control.retry_step(self, op_id, step, by)

    async def cancel(self, op_id: str) -> Operation:
        return await control.cancel(self, op_id)
