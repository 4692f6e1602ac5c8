"""Operation waiters sleep until the engine notifies a change; every waiter woken by one change
shares one database read. The clock never moves here (ManualClock(auto=False)), so a waiter
that polled on a timer would never see the change."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from podplane.bootstrap import build_state
from podplane.ops.clock import ManualClock
from podplane.ops.engine import OpsEngine
from podplane.ops.workflows import Workflows
from podplane.services.context import AppState
from podplane.settings import Settings
from podplane_testkit import touch


@pytest.fixture
async def engine(settings: Settings) -> AsyncIterator[OpsEngine]:
    state: AppState = build_state(settings)
    flows = Workflows([touch.workflow(state.settings.home / "fake-cloud.jsonl")])
    yield OpsEngine.build(state.sessions, ManualClock(auto=False), workflows=flows)
    await state.db_engine.dispose()


async def _begin(engine: OpsEngine) -> tuple[str, int]:
    op = await engine.begin(touch.KIND, "test/watched", {"name": "watched"}, key=None,
                            face="api", principal="t")
    return op.id, op.revision


@pytest.mark.parametrize("waiters", [1, 100])
async def test_a_change_wakes_every_waiter_with_one_shared_read(engine: OpsEngine,
                                                                waiters: int) -> None:
    op_id, revision = await _begin(engine)
    reads_before = engine.notifier.db_reads
    tasks = [asyncio.ensure_future(engine.wait(op_id, 50, revision)) for _ in range(waiters)]
    for _ in range(20):  # let every waiter make its first read and go to sleep
        await asyncio.sleep(0.01)
    assert not any(t.done() for t in tasks)
    first_reads = engine.notifier.db_reads - reads_before
    cancelled = await engine.cancel(op_id)  # the engine writes, then notifies
    done = await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
    assert {op.status for op in done} == {"cancelled"} == {cancelled.status}
    assert {op.revision for op in done} == {cancelled.revision} and cancelled.revision != revision
    # the waiters' first reads overlap (one or a few), and the change costs exactly one more
    assert 1 <= first_reads <= waiters
    assert engine.notifier.db_reads - reads_before == first_reads + 1


async def test_a_sleeping_waiter_reads_nothing_without_a_notification(engine: OpsEngine) -> None:
    op_id, revision = await _begin(engine)
    task = asyncio.ensure_future(engine.wait(op_id, 50, revision))
    for _ in range(20):
        await asyncio.sleep(0.01)
    reads = engine.notifier.db_reads
    for _ in range(50):  # real time passes; the engine's clock does not; nothing changes
        await asyncio.sleep(0.01)
    assert engine.notifier.db_reads == reads and not task.done()
    engine.notifier.notify(op_id)  # a notification without a change: one read, back to sleep
    for _ in range(20):
        await asyncio.sleep(0.01)
    assert engine.notifier.db_reads == reads + 1 and not task.done()
    task.cancel()


@pytest.mark.postgres
async def test_another_process_change_wakes_the_waiter_through_listen(db_url: str,
                                                                       settings: Settings
                                                                       ) -> None:
    """Two engines on one database stand for two replicas: B's waiter wakes when A writes."""
    states = [build_state(settings) for _ in range(2)]
    flows = [Workflows([touch.workflow(settings.home / "fake-cloud.jsonl")]) for _ in states]
    a, b = (OpsEngine.build(s.sessions, ManualClock(auto=False), workflows=f)
            for s, f in zip(states, flows, strict=True))
    try:
        for e in (a, b):
            await e.notifier.connect(e.sessions)
        if db_url.startswith("sqlite"):
            assert not a.notifier.listening  # one process writes SQLite: no LISTEN
            return
        assert a.notifier.listening and b.notifier.listening
        op_id, revision = await _begin(a)
        waiter = asyncio.ensure_future(b.wait(op_id, 50, revision))
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert not waiter.done()
        await a.cancel(op_id)
        woke = await asyncio.wait_for(waiter, timeout=30)
        assert woke.status == "cancelled"
    finally:
        for e, s in zip((a, b), states, strict=True):
            await e.notifier.close()
            await s.db_engine.dispose()


async def test_list_pages_are_read_once_until_an_operation_changes(
        engine: OpsEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from podplane.ops import control

    loads = 0
    real = control._page

    async def counted(*args: object, **kwargs: object) -> object:
        nonlocal loads
        loads += 1
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(control, "_page", counted)
    op_id, _ = await _begin(engine)

    async def listed() -> list[str]:
        items, _ = await engine.page(status=None, kind=None, target=None, limit=20, cursor=None,
                                     history=False)
        return [f"{o.id}:{o.status}" for o in items]

    pages = await asyncio.gather(*(listed() for _ in range(50)))
    assert loads == 1 and pages == [[f"{op_id}:pending"]] * 50
    await engine.cancel(op_id)  # the change is seen at once, not after the page's 1 s
    assert await listed() == [f"{op_id}:cancelled"] and loads == 2
