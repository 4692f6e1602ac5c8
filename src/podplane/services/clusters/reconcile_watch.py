"""Drift is found without anyone asking: a periodic, bounded observation of active clusters.

One pass (`check_clusters`) observes each active cluster podplane created and records a change
of drift once (reconcile_drift.record_drift). Passes are due every WATCH_EVERY seconds of the
engine's clock (virtual in tests and in the sandbox), so tests drive them with `tick()`. The
observation is this one function: it can later read from a shared observation cache instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import datetime, timedelta

from podplane.domain.errors import PodplaneError
from podplane.services.cloud_access import cloud_of
from podplane.services.clusters.reconcile_drift import assess, now_of, record_drift, watched
from podplane.services.context import AppState
from podplane.store import clusters as repo

WATCH_EVERY = 300.0    # seconds of the engine's clock between passes
MAX_CLUSTERS = 25      # per pass: a pass stays bounded however many clusters there are
POLL = 5.0             # real seconds between looks at the engine's clock
log = logging.getLogger(__name__)


async def check_clusters(app: AppState) -> dict[str, list[str]]:
    """One pass: each watched cluster -> its drifted units (clusters that could not be read
    are left out and looked at again next pass)."""
    async with app.sessions() as db:
        rows = [r for r in await repo.all_clusters(db) if watched(r)][:MAX_CLUSTERS]
    out: dict[str, list[str]] = {}
    for row in rows:
        try:
            found = await assess(cloud_of(app), row)
        except PodplaneError as err:
            log.info("drift check of %s skipped: %s", row.name, err.message)
            continue
        await record_drift(app, row.name, found.drift)
        out[row.name] = [d.key for d in found.drift]
    return out


class DriftWatch:
    def __init__(self, app: AppState, every: float = WATCH_EVERY) -> None:
        self.app = app
        self.every = every
        self.next_due: datetime | None = None

    async def tick(self) -> dict[str, list[str]] | None:
        """Run a pass if one is due on the engine's clock; None when not due."""
        now = now_of(self.app)
        if self.next_due is not None and now < self.next_due:
            return None
        self.next_due = now + timedelta(seconds=self.every)
        return await check_clusters(self.app)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(POLL)
            try:
                await self.tick()
            except Exception:  # a failed pass must not end the watch; the next one retries
                log.exception("drift check failed")


@asynccontextmanager
async def drift_watch(app: AppState) -> AsyncIterator[DriftWatch]:
    """The watch running in the background for as long as the app serves."""
    watch = DriftWatch(app)
    task = asyncio.create_task(watch.run())
    try:
        yield watch
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
