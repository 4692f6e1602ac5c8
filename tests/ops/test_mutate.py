"""mutate_once on resume: inspect first; resubmit only with the same client token."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.ops import starting
from podplane.ops.clock import ManualClock
from podplane.ops.context import StepContext
from podplane.ops.engine import OpsEngine
from podplane.ops.mutate import mutate_once
from podplane.ops.workflows import Workflow, Workflows
from podplane.services.context import AppState
from podplane.store import operations as repo

KIND = "test.mutate"


class TokenCloud:
    """A fake cloud port that deduplicates by client token, like AWS does."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.resources: dict[str, dict[str, Any]] = {}
        self.flows = Workflows()

    async def create(self, token: str) -> dict[str, Any]:
        self.calls.append(token)
        self.resources.setdefault(token, {"status": "CREATING", "polls": 0})
        return {"arn": f"arn:fake:{token}"}

    async def describe(self, token: str) -> dict[str, Any] | None:
        found = self.resources.get(token)
        if found is not None:
            found["polls"] += 1
            found["status"] = "READY" if found["polls"] >= 2 else "CREATING"
        return found


@pytest.fixture
def cloud_port() -> TokenCloud:
    cloud = TokenCloud()

    async def make(ctx: StepContext) -> dict[str, Any]:
        token = ctx.client_token()
        await mutate_once(ctx, token=token, submit=lambda: cloud.create(token),
                          inspect=lambda: cloud.describe(token),
                          done=lambda s: s["status"] == "READY", poll_every=30, name="res-1")
        return {"token": token}

    cloud.flows.add(Workflow.of(KIND, ("make", make)))
    return cloud


def engine(state: AppState, cloud: TokenCloud) -> OpsEngine:
    return OpsEngine.build(state.sessions, ManualClock(), workflows=cloud.flows)


async def resumed_at(state: AppState, cloud: TokenCloud, phase: str) -> tuple[OpsEngine, str]:
    """An operation that a dead process left in `phase` of step 'make' (attempt 1)."""
    eng = engine(state, cloud)
    op_id, _ = await starting.create(eng.sessions, eng.clock, eng.workflows, kind=KIND,
                                     target="t/m", params={}, key=None, face="api",
                                     principal="tester")
    async with eng.sessions.begin() as db:
        row = await repo.by_id(db, op_id)
        assert row is not None
        row.status = "running"
        await repo.update_step(db, op_id, 0, status="running", attempt=1, phase=phase,
                               checkpoint={"client_token": token_for(op_id), "name": "res-1"})
    return eng, op_id


def token_for(op_id: str) -> str:
    ctx = StepContext(op_id=op_id, kind=KIND, target="t/m", params={}, step="make", idx=0,
                      attempt=1, clock=ManualClock(), phase_name=None)
    return ctx.client_token()


async def run(eng: OpsEngine) -> dict[str, Any]:
    [op_id] = await eng.runner.scan_once()
    await eng.runner.drain()
    async with eng.sessions() as db:
        row = await repo.by_id(db, op_id)
        events = await repo.events(db, op_id)
    assert row is not None
    return {"status": row.status, "result": row.result,
            "messages": [e.message for e in events], "phases": [e.phase for e in events]}


@pytest.mark.postgres
async def test_submitted_but_missing_is_resubmitted_with_the_same_token(
    state: AppState, cloud_port: TokenCloud, db_url: str
) -> None:
    eng, op_id = await resumed_at(state, cloud_port, "submitted")
    out = await run(eng)
    assert out["status"] == "succeeded"
    assert cloud_port.calls == [token_for(op_id)]
    assert any("submitting again with the same client token" in (m or "")
               for m in out["messages"])


@pytest.mark.postgres
async def test_polling_resumes_without_calling(state: AppState, cloud_port: TokenCloud,
                                               db_url: str) -> None:
    eng, op_id = await resumed_at(state, cloud_port, "polling")
    cloud_port.resources[token_for(op_id)] = {"status": "CREATING", "polls": 0}
    out = await run(eng)
    assert out["status"] == "succeeded"
    assert cloud_port.calls == []
    assert "submitting" not in out["phases"]


async def test_first_run_records_phases_before_and_after_the_call(
    state: AppState, cloud_port: TokenCloud
) -> None:
    eng = engine(state, cloud_port)
    op_id, _ = await starting.create(eng.sessions, eng.clock, eng.workflows, kind=KIND,
                                     target="t/m", params={}, key=None, face="api",
                                     principal="tester")
    out = await run(eng)
    assert out["status"] == "succeeded"
    assert cloud_port.calls == [token_for(op_id)]
    assert [p for p, m in zip(out["phases"], out["messages"], strict=True) if m is None] == [
        "submitting", "submitted", "polling", "polling"]
    async with eng.sessions() as db:
        [step] = await repo.steps(db, [op_id])
    assert step.checkpoint["client_token"] == token_for(op_id)
    assert step.checkpoint["name"] == "res-1"
    assert step.checkpoint["submit_result"] == {"arn": f"arn:fake:{token_for(op_id)}"}
