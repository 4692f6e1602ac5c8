"""What a service call carries: who asks, through which face, and the application's ports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from podplane.domain.principal import Principal
from podplane.settings import Settings


@dataclass
class AppState:
    """Process-wide wiring built by bootstrap. Holds ports, never a 'current cluster'."""

    settings: Settings
    sessions: async_sessionmaker[AsyncSession]
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ctx:
    principal: Principal
    app: AppState
