"""The observation cache: single flight, retention by an adaptive interval, invalidation by our
own writes. A manual clock drives retention; nothing waits on real time."""

from __future__ import annotations

import asyncio

import pytest

from podplane.domain.errors import CloudError, NotFound
from podplane.services.observe import ObservationCache, observed
from tests.fakes.cloud import Fakes
from tests.perf.fleet import CLUSTER, build


class Tick:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def counting(value: object = "v") -> tuple[list[int], object]:
    calls: list[int] = []
    gate = asyncio.Event()

    async def fetch() -> object:
        calls.append(1)
        await gate.wait()
        return value

    return calls, (fetch, gate)


async def readers(cache: ObservationCache, n: int) -> tuple[int, list[object]]:
    calls, (fetch, gate) = counting()  # type: ignore[misc]
    tasks = [asyncio.ensure_future(cache.read(("k",), fetch)) for _ in range(n)]
    await asyncio.sleep(0)
    gate.set()
    values = list(await asyncio.gather(*tasks))
    return len(calls), values


@pytest.mark.parametrize("n", [1, 10, 100])
async def test_concurrent_readers_share_one_cloud_call(n: int) -> None:
    made, values = await readers(ObservationCache(fast=0), n)
    assert made == 1 and values == ["v"] * n


async def test_a_value_is_kept_fast_while_changing_and_slow_when_idle() -> None:
    tick = Tick()
    cache = ObservationCache(fast=2, slow=30, idle_after=60, stale_for=0, clock=tick)
    answers = iter([0, 1])

    async def fetch() -> int:
        return next(answers, 1)  # changes once, then stays

    assert await cache.read(("k",), fetch) == 0
    tick.now += 1
    assert await cache.read(("k",), fetch) == 0 and cache.reads == 1  # fast interval
    tick.now += 1
    assert await cache.read(("k",), fetch) == 1 and cache.reads == 2  # re-read: changed
    assert cache.version(("k",)) == 2
    for _ in range(29):  # changed within the last 60 s: re-read every 2 s
        tick.now += 2
        await cache.read(("k",), fetch)
    assert cache.reads == 31
    for _ in range(14):  # 60 s without a change: the slow interval (30 s) applies
        tick.now += 2
        await cache.read(("k",), fetch)
    assert cache.reads == 31
    tick.now += 2
    await cache.read(("k",), fetch)
    assert cache.reads == 32 and cache.version(("k",)) == 2


async def test_a_stale_value_answers_while_one_background_read_refreshes_it() -> None:
    tick = Tick()
    cache = ObservationCache(fast=2, slow=30, stale_for=30, clock=tick)
    gate, answers = asyncio.Event(), iter(["old", "new", "newest"])

    async def fetch() -> str:
        value = next(answers)
        if value == "new":
            await gate.wait()
        return value

    assert await cache.read(("k",), fetch) == "old"
    tick.now += 3  # past the interval, within stale_for: answered at once, refreshed behind
    assert [await cache.read(("k",), fetch) for _ in range(50)] == ["old"] * 50
    await asyncio.sleep(0)  # the one refresh starts
    assert cache.reads == 2
    gate.set()
    since = cache.versions([("k",)])
    assert await cache.changed([("k",)], since, timeout=5)
    assert await cache.read(("k",), fetch) == "new" and cache.reads == 2
    tick.now += 40  # past interval + stale_for: the reader waits for a new answer
    assert await cache.read(("k",), fetch) == "newest" and cache.reads == 3


async def test_an_error_reaches_every_reader_and_is_not_kept() -> None:
    cache = ObservationCache(fast=5, clock=Tick())
    failures = 0

    async def fetch() -> str:
        nonlocal failures
        failures += 1
        if failures == 1:
            raise CloudError("throttled")
        return "ok"

    results = await asyncio.gather(*(cache.read(("k",), fetch) for _ in range(5)),
                                   return_exceptions=True)
    assert all(isinstance(r, CloudError) for r in results)
    assert await cache.read(("k",), fetch) == "ok" and failures == 2


async def test_a_not_found_answer_is_kept_for_the_interval_like_a_value() -> None:
    """A kind whose CRD is not installed answers 404 each time it is read: a watcher polling a
    feature view must not cost that read on every request."""
    clock = Tick()
    cache = ObservationCache(fast=5, clock=clock, kept_errors=(NotFound,))
    reads = 0

    async def fetch() -> list[str]:
        nonlocal reads
        reads += 1
        if reads == 1:
            raise NotFound("the server could not find the requested resource", hint="h")
        return ["installed"]

    for _ in range(3):
        with pytest.raises(NotFound) as raised:
            await cache.read(("k",), fetch)
        assert (raised.value.message, raised.value.hint, reads) == (
            "the server could not find the requested resource", "h", 1)
    clock.now += 5 + cache.stale_for  # past the interval and its stale answers
    assert await cache.read(("k",), fetch) == ["installed"] and reads == 2


async def test_our_own_write_through_the_port_forgets_the_kept_read() -> None:
    fakes, hp, _ = build(3)
    cloud = observed(fakes.cloud(), ObservationCache(fast=60, clock=Tick()))
    before = await cloud.aws.hyperpod.list_cluster_nodes(CLUSTER)
    await cloud.aws.hyperpod.list_cluster_nodes(CLUSTER)
    assert hp.reads == 1
    await cloud.aws.hyperpod.delete_nodes(CLUSTER, [before[0]["InstanceId"]])
    hp.nodes[CLUSTER] = hp.nodes[CLUSTER][1:]
    after = await cloud.aws.hyperpod.list_cluster_nodes(CLUSTER)
    assert hp.reads == 2 and len(after) == len(before) - 1
    assert hp.changed() == ["batch_delete_cluster_nodes"]


async def test_a_key_nobody_reads_is_forgotten_and_its_version_never_repeats() -> None:
    tick = Tick()
    cache = ObservationCache(fast=2, slow=10, stale_for=0, forget_after=300, clock=tick)
    answers = iter(["a", "b"])

    async def fetch() -> str:
        return next(answers)

    assert await cache.read(("old",), fetch) == "a"
    first = cache.version(("old",))

    async def other() -> str:
        return "x"

    for _ in range(40):  # another key is watched for 400 s; nobody reads "old"
        tick.now += 10
        await cache.read(("watched",), other)
    assert ("old",) not in cache.entries and ("watched",) in cache.entries
    assert await cache.read(("old",), fetch) == "b"  # read again: a fresh cloud call
    assert cache.version(("old",)) > first  # an ETag built on the old version cannot match


async def test_a_polled_bucket_listing_is_one_s3_read_until_our_write() -> None:
    """The job view lists its prefixes on each poll: one ListObjectsV2 per interval, however
    many viewers; an object put through our port is listed by the next read."""
    fakes = Fakes()
    fakes.s3.buckets["b"] = {"jobs/j/out.txt": b"x"}
    lists: list[str] = []
    real = fakes.s3.list_objects

    async def counted(bucket: str, prefix: str) -> list[dict[str, object]]:
        lists.append(prefix)
        return await real(bucket, prefix)

    fakes.s3.list_objects = counted  # type: ignore[method-assign]
    cloud = observed(fakes.cloud(), ObservationCache(fast=60, clock=Tick()))
    views = await asyncio.gather(*(cloud.aws.s3.list_objects("b", "jobs/j/") for _ in range(10)))
    assert lists == ["jobs/j/"] and all(len(v) == 1 for v in views)
    await cloud.aws.s3.put_object("b", "jobs/j/ckpt.pt", b"y")
    assert len(await cloud.aws.s3.list_objects("b", "jobs/j/")) == 2 and len(lists) == 2


async def test_a_request_through_the_service_proxy_forgets_nothing() -> None:
    """An endpoint invocation reaches an application, not a Kubernetes object: a kept list
    stays kept (and a watched one is not listed again), while a patch forgets it."""
    from podplane.services.observe.ports import Observed

    class Kube:
        lists = 0

        async def list(self, *args: object, **kw: object) -> list[object]:
            self.lists += 1
            return []

        async def proxy(self, *args: object) -> tuple[int, object]:
            return 200, {"ok": True}

        async def patch(self, *args: object, **kw: object) -> dict[str, object]:
            return {}

    cache, kube = ObservationCache(fast=60, clock=Tick()), Kube()
    port = Observed(kube, cache, ("kube", "eks"), frozenset({"list"}))
    await port.list("v1", "ConfigMap")
    assert await port.proxy("POST", "ns", "svc", 80, "/v1/completions") == (200, {"ok": True})
    await port.list("v1", "ConfigMap")
    assert kube.lists == 1
    await port.patch("v1", "ConfigMap", "x", {})
    await port.list("v1", "ConfigMap")
    assert kube.lists == 2


async def test_waiters_on_a_key_wake_when_a_read_changes_it() -> None:
    tick = Tick()
    cache = ObservationCache(fast=1, clock=tick)
    state = {"v": 1}

    async def fetch() -> int:
        return state["v"]

    await cache.read(("k",), fetch)
    since = cache.versions([("k",)])
    waiter = asyncio.ensure_future(cache.changed([("k",)], since, timeout=30))
    await asyncio.sleep(0)
    tick.now += 2
    await cache.read(("k",), fetch)  # same answer: nobody wakes
    await asyncio.sleep(0)
    assert not waiter.done()
    state["v"] = 2
    tick.now += 2
    await cache.read(("k",), fetch)
    assert await waiter is True


def test_unwrapped_fakes_have_no_cache() -> None:
    from podplane.services.observe import cache_of
    assert cache_of(Fakes().cloud()) is None
