"""One podplane-created cluster for the package's modules, with the observation cache at its
production retention (issue 31): the suite's default (`PODPLANE_OBSERVE_SECONDS=0`, nothing
kept) hides every stale read, so these modules turn retention on for their own apps only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from podplane.bootstrap import build_app
from podplane.domain.effects import Role
from podplane.services.cloud_access import cloud_of
from podplane.services.observe import ObservationCache, cache_of
from podplane.settings import Settings
from podplane_testkit.stepping_clock import SteppingClock
from tests.conftest import backoff_on, mint
from tests.golden import created_stack
from tests.jobs.conftest import group_of
from tests.stack import SandboxThread, Stack


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


def production_cache(stack: Stack, clock: Callable[[], float]) -> ObservationCache:
    """The app's cache with the defaults of `ObservationCache.from_env` (2 s, 10 s idle,
    watches on) on `clock` (a bench passes the real one)."""
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


@pytest_asyncio.fixture(scope="package", loop_scope="package")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with created_stack(tmp_path_factory, "truth") as stack:  # the run's golden
        clock = StoppedClock()
        cache = production_cache(stack, clock)
        yield World(stack, await group_of(stack), clock, cache)


@asynccontextmanager
async def replicas(tmp: Path, db_url: str, count: int) -> AsyncIterator[list[Stack]]:
    """One sandbox and `count` control planes on one database (HA replicas), each with its
    cache at production retention on one stopped clock; tokens minted once, valid on all."""
    sandbox = SandboxThread(tmp / "cloud")
    apps = []
    for i in range(count):
        app = build_app(Settings(home=tmp / f"cp{i}", database_url=db_url,
                                 aws_endpoint_url=sandbox.box.aws_url))
        app.state.podplane.ops_clock = SteppingClock(sandbox.box.aws_url, sandbox.box.secret)
        apps.append(app)
    clock = StoppedClock()
    try:
        async with AsyncExitStack() as running:
            for app in apps:
                await running.enter_async_context(app.router.lifespan_context(app))
                backoff_on(app)
            tokens = {r.value: await mint(apps[0], f"stack-{r.value}", r) for r in Role}
            stacks = [Stack(sandbox, app, tokens) for app in apps]
            for stack in stacks:
                production_cache(stack, clock)
            yield stacks
    finally:
        sandbox.stop()
