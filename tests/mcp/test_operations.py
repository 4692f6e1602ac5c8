"""Operation tools on the test workflow: wait, progress, retry a step, face parity with REST."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.client import Client

from podplane.bootstrap import build_app
from podplane.ops.clock import ManualClock
from podplane.settings import Settings
from podplane_testkit import touch as testing
from podplane_testkit.touch import LEDGER_ENV
from tests.conftest import client_for
from tests.mcp.conftest import mcp_client, structured


@pytest.fixture
async def app(settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The control plane with the test workflow, on virtual time (sleeps cost nothing)."""
    monkeypatch.setenv(testing.ENV, "1")
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "ledger.jsonl"))
    application = build_app(settings)
    application.state.podplane.ops_clock = ManualClock(auto=True)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def operator(app, tokens_by_role) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    async with client_for(app, tokens_by_role["operator"]) as c:
        yield c


async def wait_done(client: Client, op_id: str) -> dict[str, Any]:
    """Do what an agent does: call operation_wait, following the `next` hint, until done.

    On virtual time a wait may time out (virtually) before the runner finishes, so one
    call is not enough; that is the bounded-slice pattern the tool is designed for.
    """
    call: dict[str, Any] = {"tool": "operation_wait", "arguments": {"operation_id": op_id}}
    for _ in range(200):
        out = structured(await client.call_tool(call["tool"], call["arguments"]))
        call = out["next"]
        if call is None or call["tool"] != "operation_wait":
            return out
    raise AssertionError(f"{op_id} never finished")


async def start(rest: httpx.AsyncClient, name: str, **params: Any) -> str:
    r = await rest.post("/api/v1/operations/_test",
                        json={"target": f"thing/{name}", "params": {"name": name, **params}})
    assert r.status_code == 202, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


async def test_wait_returns_the_finished_operation_with_progress(  # type: ignore[no-untyped-def]
    app, operator, tokens_by_role
) -> None:
    op_id = await start(operator, "a")
    async with mcp_client(app, tokens_by_role["viewer"]) as client:
        waited = await wait_done(client, op_id)
    assert waited["result"]["id"] == op_id
    assert waited["result"]["status"] == "succeeded"
    assert waited["progress"] == {
        "status": "succeeded", "steps_done": 3, "steps_total": 3, "current_step": None,
        "current_phase": None, "summary": "succeeded: 3/3 steps done"}
    assert waited["next"] is None
    assert waited["status_tool"] == "operation_wait"


async def test_the_same_operation_through_rest_and_mcp_is_the_same(  # type: ignore[no-untyped-def]
    app, operator, tokens_by_role
) -> None:
    op_id = await start(operator, "b")
    async with mcp_client(app, tokens_by_role["viewer"]) as client:
        await wait_done(client, op_id)
        via_mcp = [
            structured(await client.call_tool("operation_get", {"operation_id": op_id}))["result"],
            structured(await client.call_tool("operation_get",
                                              {"operation_id": op_id, "history": True}))["result"],
            structured(await client.call_tool("operation_list", {"limit": 5}))["result"],
            structured(await client.call_tool("operation_wait", {"operation_id": op_id}))["result"],
        ]
    via_rest = [
        (await operator.get(f"/api/v1/operations/{op_id}", params={"history": False})).json(),
        (await operator.get(f"/api/v1/operations/{op_id}", params={"history": True})).json(),
        (await operator.get("/api/v1/operations", params={"limit": 5})).json(),
        (await operator.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 50})).json(),
    ]
    assert via_mcp == via_rest
    assert via_mcp[0]["status"] == "succeeded"
    assert via_mcp[1]["steps"][1]["history"]  # history really asked for
    assert [o["id"] for o in via_mcp[2]["items"]] == [op_id]


async def test_failed_step_is_retried_through_mcp_and_audited_as_agent(  # type: ignore[no-untyped-def]
    app, operator, admin, tokens_by_role
) -> None:
    op_id = await start(operator, "c", fail="denied:1")
    async with mcp_client(app, tokens_by_role["operator"]) as client:
        failed = await wait_done(client, op_id)
        hint = failed["next"]
        retried = structured(await client.call_tool(hint["tool"], hint["arguments"]))
        done = await wait_done(client, op_id)
    assert failed["result"]["status"] == "failed"
    assert failed["progress"]["summary"].startswith("failed: 1/3 steps done; failed at touch")
    assert hint == {"tool": "operation_retry_step",
                    "arguments": {"operation_id": op_id, "step": "touch"}, "why": hint["why"]}
    assert retried["result"]["id"] == op_id
    assert retried["status_tool"] == "operation_wait"  # names the tool that decides completion
    if retried["result"]["status"] in ("pending", "running"):  # the runner may already be done
        assert retried["next"]["tool"] == "operation_wait"
    assert done["result"]["status"] == "succeeded"
    audit = (await admin.get("/api/v1/audit", params={"action": "operation.retry_step"})).json()
    assert [(a["face"], a["principal"], a["result"]) for a in audit] == [
        ("agent", "t-operator", "ok")]


async def test_viewer_cannot_retry_or_cancel(  # type: ignore[no-untyped-def]
    app, operator, tokens_by_role
) -> None:
    op_id = await start(operator, "d", fail="denied:1")
    async with mcp_client(app, tokens_by_role["viewer"]) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        await wait_done(client, op_id)
        retry = await client.call_tool("operation_retry_step",
                                       {"operation_id": op_id, "step": "touch"})
        cancel = await client.call_tool("operation_cancel", {"operation_id": op_id})
    assert {"operation_get", "operation_list", "operation_wait"} <= names
    assert not names & {"operation_retry_step", "operation_cancel"}
    assert structured(retry)["error"]["code"] == "forbidden"
    assert structured(cancel)["error"]["code"] == "forbidden"
    op = (await operator.get(f"/api/v1/operations/{op_id}")).json()
    assert op["status"] == "failed" and op["steps"][1]["attempt"] == 1  # untouched


async def test_rest_refusal_reaches_the_agent_unchanged(  # type: ignore[no-untyped-def]
    app, operator, tokens_by_role
) -> None:
    op_id = await start(operator, "e")
    async with mcp_client(app, tokens_by_role["operator"]) as client:
        await wait_done(client, op_id)
        result = await client.call_tool("operation_retry_step",
                                        {"operation_id": op_id, "step": "touch"})
        missing = await client.call_tool("operation_get", {"operation_id": "op-nope"})
    rest = await operator.post(f"/api/v1/operations/{op_id}/steps/touch/retry")
    assert rest.status_code == 409
    assert result.is_error and structured(result)["error"] == rest.json()
    assert structured(missing)["error"]["code"] == "not_found"
