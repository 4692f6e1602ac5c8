"""Operations tests: the real app with the test workflow and a virtual clock (no real waits)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from podplane.bootstrap import build_app, build_state
from podplane.ops.clock import ManualClock
from podplane.ops.engine import OpsEngine
from podplane.ops.workflows import Workflow, Workflows
from podplane.services.context import AppState
from podplane.settings import Settings
from podplane_testkit import touch
from podplane_testkit.touch import FakeCloud


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(auto=True)


@pytest.fixture
async def app(settings: Settings, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
              ) -> AsyncIterator[Any]:
    monkeypatch.setenv("PODPLANE_TEST_WORKFLOWS", "1")
    monkeypatch.delenv("PODPLANE_CRASH_AT", raising=False)
    application = build_app(settings)
    application.state.podplane.ops_clock = clock
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def state(settings: Settings) -> AsyncIterator[AppState]:
    """The store alone (no server, no runner): for engine-level tests."""
    st = build_state(settings)
    yield st
    await st.db_engine.dispose()


def touch_workflow(state: AppState) -> Workflow:
    return touch.workflow(state.settings.home / "fake-cloud.jsonl")


def engine_with(state: AppState, clock: ManualClock, *flows: Workflow) -> OpsEngine:
    """An engine (runner not started) with the test workflow and `flows`."""
    return OpsEngine.build(state.sessions, clock,
                           workflows=Workflows([touch_workflow(state), *flows]))


@pytest.fixture
def cloud(settings: Settings) -> FakeCloud:
    return FakeCloud(settings.home / "fake-cloud.jsonl")


async def start(client: httpx.AsyncClient, target: str, key: str | None = None,
                **params: Any) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    params.setdefault("name", target.replace("/", "-"))
    return await client.post("/api/v1/operations/_test", headers=headers,
                             json={"target": target, "params": params})


async def settle(client: httpx.AsyncClient, op_id: str) -> dict[str, Any]:
    """Long-poll until terminal (the virtual clock makes each wait cost no real time)."""
    for _ in range(50):
        r = await client.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 50})
        assert r.status_code == 200, r.text
        if r.json()["status"] in ("succeeded", "failed", "cancelled"):
            return r.json()  # type: ignore[no-any-return]
    raise AssertionError(f"operation {op_id} did not finish: {r.json()}")


async def until(client: httpx.AsyncClient, op_id: str, check: Any) -> dict[str, Any]:
    """Follow revisions (woken by the notifier) until `check(op)` holds."""
    op = (await client.get(f"/api/v1/operations/{op_id}")).json()
    for _ in range(100):
        if check(op):
            return op  # type: ignore[no-any-return]
        r = await client.get(f"/api/v1/operations/{op_id}/wait",
                             params={"timeout": 50, "revision": op["revision"]})
        op = r.json()
    raise AssertionError(f"condition never held: {op}")


def step(op: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in op["steps"] if s["name"] == name)  # type: ignore[no-any-return]
