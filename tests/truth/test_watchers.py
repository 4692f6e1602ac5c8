"""Read-your-writes with several watchers at once, the cache at production retention: on
SQLite (one replica) and on PostgreSQL with two replicas, where the operation may run on
either one and the watchers read both (ADR 0013). Every read begun after the operation
reported its end shows what it made; no watcher, having seen the job, sees it vanish."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.clusters.helpers import BODY
from tests.golden import build_created
from tests.groups.conftest import finish
from tests.stack import Stack
from tests.truth.conftest import replicas

C = BODY["name"]
JOB = f"/api/v1/clusters/{C}/jobs/w1"
WATCHERS = 6


@dataclass
class Seen:
    reads: list[tuple[float, int, int]] = field(default_factory=list)  # (began, replica, code)
    stop: asyncio.Event = field(default_factory=asyncio.Event)


async def watch(stacks: list[Stack], me: int, seen: Seen) -> None:
    """Poll the job's view, each round on the next replica, until told to stop."""
    clients = [s.client("viewer") for s in stacks]
    try:
        n = me
        while not seen.stop.is_set():
            replica = n % len(stacks)
            began = time.monotonic()
            r = await clients[replica].get(JOB)
            seen.reads.append((began, replica, r.status_code))
            n += 1
            await asyncio.sleep(0)
    finally:
        for c in clients:
            await c.aclose()


@pytest.mark.postgres
async def test_watchers_on_every_replica_see_the_job_once_submitted(
        db_url: str, tmp_path: Path) -> None:
    count = 2 if db_url.startswith("postgresql") else 1
    async with replicas(tmp_path, db_url, count) as stacks:
        group = (await build_created(stacks[0]))["group"]
        seen = Seen()
        watchers = [asyncio.ensure_future(watch(stacks, i, seen)) for i in range(WATCHERS)]
        await asyncio.sleep(0.05)  # the watchers have read the job's 404 into the caches
        async with stacks[-1].client("operator") as api:
            body = {"name": "w1", "recipe": "pytorch-ddp", "instance_group": group,
                    "replicas": 1}
            r = await api.post(f"/api/v1/clusters/{C}/jobs", json=body)
            assert r.status_code == 202, r.text
            done = await finish(api, r.json())
            ended = time.monotonic()
            assert done["status"] == "succeeded", done
            for stack in stacks:  # at once, on every replica: the job, and the same submit
                async with stack.client("viewer") as viewer, \
                        stack.client("operator") as same:
                    got = await viewer.get(JOB)
                    assert got.status_code == 200, (stacks.index(stack), got.text)
                    again = await same.post(f"/api/v1/clusters/{C}/jobs", json=body)
                    assert again.status_code == 200 and again.json()["changed"] is False, \
                        (stacks.index(stack), again.text)
        await asyncio.sleep(0.05)
        seen.stop.set()
        await asyncio.gather(*watchers)
    before = [code for began, _, code in seen.reads if began < ended]
    after = [(replica, code) for began, replica, code in seen.reads if began > ended]
    assert 404 in before and after, (len(before), len(after))  # the watchers were there
    assert {code for _, code in after} == {200}, after
    assert {replica for replica, _ in after} == set(range(count))
