"""Engine rules without a runner: reads do not lock targets, unknown kinds wait, early cancel."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.domain.errors import TargetBusy
from podplane.ops import starting
from podplane.ops.clock import ManualClock
from podplane.ops.context import StepContext
from podplane.ops.engine import OpsEngine
from podplane.ops.workflows import Workflow
from podplane.services.context import AppState
from podplane.store import operations as repo
from podplane_testkit import touch
from tests.ops.conftest import engine_with


async def create(eng: OpsEngine, kind: str, target: str) -> str:
    op_id, created = await starting.create(eng.sessions, eng.clock, eng.workflows, kind=kind,
                                           target=target, params={"name": "x"}, key=None,
                                           face="cli", principal="tester")
    assert created
    return op_id


@pytest.mark.postgres
async def test_non_mutating_workflows_do_not_hold_the_target(state: AppState,
                                                             db_url: str) -> None:
    async def look(ctx: StepContext) -> dict[str, Any]:
        return {"seen": ctx.target}

    eng = engine_with(state, ManualClock(), Workflow.of("test.look", ("look", look),
                                                         mutating=False))
    first, second = await create(eng, "test.look", "t/shared"), await create(eng, "test.look",
                                                                             "t/shared")
    assert first != second
    await create(eng, touch.KIND, "t/shared")  # a mutation may still start
    with pytest.raises(TargetBusy):
        await create(eng, touch.KIND, "t/shared")


@pytest.mark.postgres
async def test_a_kind_this_version_does_not_know_stays_pending(state: AppState,
                                                               db_url: str) -> None:
    eng = engine_with(state, ManualClock())
    op_id = await create(eng, touch.KIND, "t/future")
    async with eng.sessions.begin() as db:
        row = await repo.by_id(db, op_id)
        assert row is not None
        row.kind = "from.a.newer.version"
    assert await eng.runner.scan_once() == []
    assert (await eng.read(op_id)).status == "pending"


@pytest.mark.postgres
async def test_cancelling_an_unclaimed_operation_is_immediate(state: AppState,
                                                              db_url: str) -> None:
    eng = engine_with(state, ManualClock())
    op_id = await create(eng, touch.KIND, "t/early")
    op = await eng.cancel(op_id)
    assert op.status == "cancelled" and op.cancel_requested
    assert [s.status for s in op.steps] == ["pending"] * 3
    assert await eng.runner.scan_once() == []
    await create(eng, touch.KIND, "t/early")  # the target is free again
