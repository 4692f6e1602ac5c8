"""Engine rules without a runner: reads do not lock targets, unknown kinds wait, early cancel."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.domain.errors import TargetBusy
from podplane.ops import control, starting, testing, workflows
from podplane.ops.clock import ManualClock
from podplane.ops.context import StepContext
from podplane.ops.engine import OpsEngine
from podplane.services.context import AppState
from podplane.store import operations as repo


async def create(eng: OpsEngine, kind: str, target: str) -> str:
    op_id, created = await starting.create(eng.sessions, eng.clock, kind=kind, target=target,
                                           params={"name": "x"}, key=None, face="cli",
                                           principal="tester")
    assert created
    return op_id


@pytest.mark.postgres
async def test_non_mutating_workflows_do_not_hold_the_target(state: AppState,
                                                             db_url: str) -> None:
    async def look(ctx: StepContext) -> dict[str, Any]:
        return {"seen": ctx.target}

    workflows.register("test.look", [("look", look)], mutating=False)
    eng = OpsEngine.build(state.sessions, ManualClock())
    first, second = await create(eng, "test.look", "t/shared"), await create(eng, "test.look",
                                                                             "t/shared")
    assert first != second
    await create(eng, testing.KIND, "t/shared")  # a mutation may still start
    with pytest.raises(TargetBusy):
        await create(eng, testing.KIND, "t/shared")


@pytest.mark.postgres
async def test_a_kind_this_version_does_not_know_stays_pending(state: AppState,
                                                               db_url: str) -> None:
    eng = OpsEngine.build(state.sessions, ManualClock())
    op_id = await create(eng, testing.KIND, "t/future")
    async with eng.sessions.begin() as db:
        row = await repo.by_id(db, op_id)
        assert row is not None
        row.kind = "from.a.newer.version"
    assert await eng.runner.scan_once() == []
    assert (await control.read(eng, op_id)).status == "pending"


@pytest.mark.postgres
async def test_cancelling_an_unclaimed_operation_is_immediate(state: AppState,
                                                              db_url: str) -> None:
    eng = OpsEngine.build(state.sessions, ManualClock())
    op_id = await create(eng, testing.KIND, "t/early")
    op = await control.cancel(eng, op_id)
    assert op.status == "cancelled" and op.cancel_requested
    assert [s.status for s in op.steps] == ["pending"] * 3
    assert await eng.runner.scan_once() == []
    await create(eng, testing.KIND, "t/early")  # the target is free again
