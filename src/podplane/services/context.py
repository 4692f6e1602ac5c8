"""What a service call carries: who asks, through which face, and the application's ports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from podplane.domain.principal import Principal
from podplane.ops.clock import Clock
from podplane.ops.engine import OpsEngine
from podplane.settings import Settings

if TYPE_CHECKING:
    from podplane.services.cloud_access import Cloud


@dataclass
class AppState:
    """Process-wide wiring built by the composition root (bootstrap). Holds ports, never a
    'current cluster'."""

    settings: Settings
    sessions: async_sessionmaker[AsyncSession]
    db_engine: AsyncEngine  # disposed when the process stops
    ops_clock: Clock | None = None  # the engine's clock (None: wall-clock time)
    ops: OpsEngine | None = None  # set when the engine starts (bootstrap's lifespan)
    cloud: Cloud | None = None  # set by cloud_access.attach_cloud (cached, for readers)
    engine_cloud: Cloud | None = None  # the same cloud uncached, for workflow steps


@dataclass(frozen=True)
class Ctx:
    principal: Principal
    app: AppState
