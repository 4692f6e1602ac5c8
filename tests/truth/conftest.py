"""One podplane-created cluster per module with the observation cache at its production
retention (issue 31): the suite's default (`PODPLANE_OBSERVE_SECONDS=0`, nothing kept) hides
every stale read, so these modules turn retention on for their own app only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from podplane.services.cloud_access import cloud_of
from podplane.services.observe import ObservationCache, cache_of
from tests.jobs.conftest import created
from tests.stack import Stack, running_stack


@dataclass
class StoppedClock:
    """The cache's clock, moved only by the test: every read of a case falls in one
    observation interval, the worst case of production retention (a console polling every
    2 s is always inside one)."""

    now: float = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def production_cache(stack: Stack, clock: StoppedClock) -> ObservationCache:
    """The app's cache with the defaults of `ObservationCache.from_env` (2 s, 10 s idle,
    watches on) on `clock`."""
    cache = cache_of(cloud_of(stack.app.state.podplane))
    assert cache is not None
    defaults = ObservationCache()
    cache.fast, cache.slow, cache.stale_for = defaults.fast, defaults.slow, defaults.slow
    cache.watch_kube, cache.clock = True, clock
    cache.entries.clear()
    return cache


@dataclass
class World:
    stack: Stack
    group: str
    clock: StoppedClock
    cache: ObservationCache


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with running_stack(tmp_path_factory.mktemp("truth")) as stack:
        clock = StoppedClock()
        cache = production_cache(stack, clock)
        yield World(stack, await created(stack), clock, cache)
