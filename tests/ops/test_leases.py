"""Leases at the engine level: resume after a dead process, stale writers, lost heartbeats."""

from __future__ import annotations

import asyncio
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from podplane.ops import starting
from podplane.ops.clock import ManualClock, RealClock
from podplane.ops.engine import OpsEngine
from podplane.ops.execute import Execution
from podplane.ops.runner import HOST
from podplane.services.context import AppState
from podplane.store import operations as repo
from podplane_testkit import touch
from tests.ops.conftest import engine_with


def engine(state: AppState, clock: ManualClock) -> OpsEngine:
    return engine_with(state, clock)


async def new_op(eng: OpsEngine, name: str, **params: object) -> str:
    op_id, _ = await starting.create(eng.sessions, eng.clock, eng.workflows, kind=touch.KIND,
                                     target=f"test/{name}", params={"name": name, **params},
                                     key=None, face="api", principal="tester")
    return op_id


async def set_lease(eng: OpsEngine, op_id: str, owner: str, seconds: float) -> None:
    async with eng.sessions.begin() as db:
        row = await repo.by_id(db, op_id)
        assert row is not None
        row.lease_owner = owner
        row.lease_expires_at = RealClock().now() + timedelta(seconds=seconds)


async def row_of(eng: OpsEngine, op_id: str) -> tuple[str, int, str | None]:
    async with eng.sessions() as db:
        row = await repo.by_id(db, op_id)
        assert row is not None
        return row.status, row.revision, row.lease_owner


async def polling(eng: OpsEngine, op_id: str) -> None:
    """Let the execution reach its poll sleep (blocked on the manual clock)."""
    for _ in range(400):
        await asyncio.sleep(0.005)
        async with eng.sessions() as db:
            steps = await repo.steps(db, [op_id])
        if steps[1].phase == "polling":
            return
    raise AssertionError("the touch step never reached polling")


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.postgres
async def test_a_writer_without_the_lease_changes_nothing(state: AppState, db_url: str) -> None:
    eng = engine(state, ManualClock())
    op_id = await new_op(eng, "stale")
    await set_lease(eng, op_id, "elsewhere:1:abc", 30)
    before = await row_of(eng, op_id)
    await Execution(eng.runner.engine, op_id).run()  # we never held it: every write is refused
    assert await row_of(eng, op_id) == before
    assert not (Path(state.settings.home) / "fake-cloud.jsonl").exists()


@pytest.mark.postgres
async def test_live_leases_are_respected_dead_or_expired_ones_are_taken(
    state: AppState, db_url: str
) -> None:
    eng = engine(state, ManualClock())
    live, dead, expired = [await new_op(eng, n) for n in ("live", "dead", "expired")]
    await set_lease(eng, live, "another-host:1:abc", 30)
    await set_lease(eng, dead, f"{HOST}:{dead_pid()}:abc", 30)
    await set_lease(eng, expired, "another-host:1:abc", -1)
    claimed = await eng.runner.scan_once()
    assert sorted(claimed) == sorted([dead, expired])
    await eng.runner.drain()
    assert (await row_of(eng, dead))[0] == "succeeded"
    assert (await row_of(eng, expired))[0] == "succeeded"
    assert (await row_of(eng, live))[:1] == ("pending",)


@pytest.mark.postgres
async def test_a_lost_lease_stops_the_execution(state: AppState, db_url: str) -> None:
    clock = ManualClock(auto=False)
    eng = engine(state, clock)
    op_id = await new_op(eng, "thief", delay=600, poll=5)
    assert await eng.runner.scan_once() == [op_id]
    task = eng.runner._tasks[op_id]
    await polling(eng, op_id)
    await set_lease(eng, op_id, "thief:1:abc", 30)
    await eng.runner.renew_once()
    with pytest.raises(asyncio.CancelledError):
        await task
    status, revision, owner = await row_of(eng, op_id)
    await clock.advance(600)
    await asyncio.sleep(0.01)
    assert (status, owner) == ("running", "thief:1:abc")
    assert await row_of(eng, op_id) == (status, revision, owner)
    assert eng.runner.running == set()


@pytest.mark.postgres
async def test_an_orderly_stop_releases_leases_for_the_next_process(
    state: AppState, db_url: str
) -> None:
    clock = ManualClock(auto=False)
    first = engine(state, clock)
    await first.start()
    op_id = await new_op(first, "handover", delay=600, poll=5)
    first.changed(op_id)
    await polling(first, op_id)
    assert (await row_of(first, op_id))[2].startswith(first.runner.owner + "/")
    await first.stop()
    assert (await row_of(first, op_id))[::2] == ("running", None)

    second = engine(state, ManualClock(auto=True))
    assert await second.runner.scan_once() == [op_id]
    await second.runner.drain()
    assert (await row_of(second, op_id))[0] == "succeeded"


@pytest.mark.postgres
async def test_two_processes_scanning_together_run_each_operation_once(
    state: AppState, db_url: str
) -> None:
    a, b = engine(state, ManualClock()), engine(state, ManualClock())
    ops = [await new_op(a, f"pair-{i}") for i in range(10)]
    claimed_a, claimed_b = await asyncio.gather(a.runner.scan_once(), b.runner.scan_once())
    assert not set(claimed_a) & set(claimed_b)
    assert sorted(claimed_a + claimed_b) == sorted(ops)
    await asyncio.gather(a.runner.drain(), b.runner.drain())
    assert {(await row_of(a, op_id))[0] for op_id in ops} == {"succeeded"}
    ledger = touch.FakeCloud(Path(state.settings.home) / "fake-cloud.jsonl").entries()
    assert sorted(e["name"] for e in ledger) == sorted(f"pair-{i}" for i in range(10))


@pytest.mark.postgres
async def test_every_claim_gets_a_fresh_fencing_token_and_a_stale_holder_is_refused(
    state: AppState, db_url: str
) -> None:
    """The same process claims an operation again after its lease lapsed: the execution of the
    first claim (still alive, say paused) can no longer write, though the process is the same."""
    clock = ManualClock(auto=False)
    eng = engine(state, clock)
    op_id = await new_op(eng, "fenced", delay=600, poll=5)
    assert await eng.runner.scan_once() == [op_id]
    first = (await row_of(eng, op_id))[2]
    assert first is not None and first.startswith(eng.runner.owner + "/")
    await polling(eng, op_id)
    stale = Execution(eng.runner.engine, op_id, lease=first)
    eng.runner._tasks.pop(op_id).cancel()  # its lease lapses; the process claims it again
    await set_lease(eng, op_id, first, -1)
    assert await eng.runner.scan_once() == [op_id]
    second = (await row_of(eng, op_id))[2]
    assert second is not None and second != first
    assert second.startswith(eng.runner.owner + "/")
    holder = eng.runner._tasks.pop(op_id)  # hold the second claim still while we look
    holder.cancel()
    await asyncio.gather(holder, return_exceptions=True)
    before = await row_of(eng, op_id)
    await stale.run()  # every write of the stale holder is refused: nothing changes
    assert await row_of(eng, op_id) == before
    await set_lease(eng, op_id, second, -1)
    assert await eng.runner.scan_once() == [op_id]
    await clock.advance(600)
    await eng.runner.drain()
    assert (await row_of(eng, op_id))[0] == "succeeded"
