"""The cache's fence (ADR 0013) on its own: no value read before a fence is served after it,
not even one whose read is still in flight; across replicas every read learns the database's
mark from a query begun after it arrived, concurrent readers sharing one."""

from __future__ import annotations

import asyncio

from podplane.domain.errors import NotFound
from podplane.services.observe import ObservationCache


def cache() -> ObservationCache:
    now = [0.0]  # a clock that never moves: every value is fresh unless fenced
    return ObservationCache(clock=lambda: now[0], kept_errors=(NotFound,))


async def test_a_not_found_read_before_a_fence_is_not_served_after_it() -> None:
    c, cloud = cache(), {"job": None}

    async def fetch() -> str:
        if cloud["job"] is None:
            raise NotFound("no job 'ft1'")
        return str(cloud["job"])
    try:
        await c.read(("job",), fetch)
    except NotFound:
        pass
    cloud["job"] = "ft1"  # the engine's step made it ...
    c.fence()  # ... and fences before it records the step's end
    assert await c.read(("job",), fetch) == "ft1"
    assert c.reads == 2


async def test_a_read_in_flight_across_a_fence_is_neither_joined_nor_kept() -> None:
    c, release, values = cache(), asyncio.Event(), iter(["old", "new"])

    async def fetch() -> str:
        value = next(values)
        if value == "old":
            await release.wait()  # began before the write, answers after it
        return value
    early = asyncio.ensure_future(c.read(("k",), fetch))
    await asyncio.sleep(0)
    c.fence()
    late = await c.read(("k",), fetch)  # would have joined `early` without the fence
    release.set()
    assert (await early, late) == ("old", "new")
    assert await c.read(("k",), fetch) == "new"  # and "old" was not stored over it


async def test_replicas_learn_the_mark_from_a_query_begun_after_they_arrived() -> None:
    c, marks, queries, gate = cache(), [1], [], asyncio.Event()

    async def mark() -> int:  # what the database committed when the query began
        seen = marks[0]
        queries.append(seen)
        await gate.wait()
        return seen
    c.fence_source = mark
    first = [asyncio.ensure_future(c.sync()) for _ in range(5)]
    while not queries:
        await asyncio.sleep(0)  # the query has begun: readers from now on need another one
    marks[0] = 2
    later = [asyncio.ensure_future(c.sync()) for _ in range(5)]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(*first, *later)
    assert queries == [1, 2]  # two queries for ten readers, the second begun after the move
    assert c.epoch == 2  # fenced when it first learned a mark, and again when it moved


async def test_a_failed_mark_query_fences() -> None:
    c = cache()

    async def down() -> int:
        raise ConnectionError("database unreachable")
    c.fence_source = down
    await c.sync()
    await c.sync()
    assert c.epoch == 2  # never serve what may be stale
