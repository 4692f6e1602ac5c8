"""The engine as the process sees it: clock, notifier, runner, built once at start."""

from __future__ import annotations

import os
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from podplane.ops.clock import Clock, RealClock
from podplane.ops.execute import Engine
from podplane.ops.notify import Notifier
from podplane.ops.runner import Runner, new_owner_id

LEASE_ENV = "PODPLANE_OPS_LEASE_SECONDS"


@dataclass
class OpsEngine:
    sessions: async_sessionmaker[AsyncSession]
    clock: Clock
    notifier: Notifier
    runner: Runner

    @classmethod
    def build(cls, sessions: async_sessionmaker[AsyncSession], clock: Clock | None = None,
              backoff_base: float = 2.0) -> OpsEngine:
        clock = clock or RealClock()
        notifier = Notifier()
        core = Engine(sessions=sessions, clock=clock, notifier=notifier, owner=new_owner_id(),
                      backoff_base=backoff_base)
        lease = float(os.environ.get(LEASE_ENV, "30"))
        return cls(sessions, clock, notifier, Runner(core, lease_seconds=lease))

    async def start(self) -> None:
        await self.runner.start()

    async def stop(self) -> None:
        await self.runner.stop()

    def changed(self, op_id: str) -> None:
        """Tell watchers and the runner that an operation changed outside an execution."""
        self.notifier.notify(op_id)
        self.runner.kick()
