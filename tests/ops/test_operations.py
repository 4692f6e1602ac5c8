"""The operation model, idempotency, the target rule, retry and cancel through REST."""

from __future__ import annotations

import asyncio

import pytest

from podplane.ops.clock import ManualClock
from podplane_testkit.touch import FakeCloud
from tests.conftest import client_for
from tests.ops.conftest import settle, start, step, until

IN_POLLING = staticmethod(lambda op: step(op, "touch")["phase"] == "polling")


@pytest.mark.postgres
async def test_touch_runs_every_phase_and_keeps_history(admin, cloud: FakeCloud,
                                                        db_url: str) -> None:
    r = await start(admin, "test/one", key="k-one", delay=30, poll=10)
    assert r.status_code == 202, r.text
    created = r.json()
    assert created["status_url"] == f"/api/v1/operations/{created['id']}"
    assert created["status_tool"] == "operation_wait"
    assert created["requested_by"] == {"face": "api", "principal": "t-admin"}
    assert created["idempotency_key"] == "k-one"
    assert [s["name"] for s in created["steps"]] == ["prepare", "touch", "verify"]

    op = await settle(admin, created["id"])
    assert op["status"] == "succeeded", op
    assert all(s["status"] == "succeeded" and s["attempt"] == 1 for s in op["steps"])
    touch = step(op, "touch")
    phases = [e["phase"] for e in touch["history"]]
    assert phases[:4] == [None, "submitting", "submitted", "polling"]
    assert touch["history"][-1]["status"] == "succeeded"
    assert touch["started_at"] <= touch["ended_at"]
    entries = cloud.entries()
    assert len(entries) == 1 and entries[0]["client_token"] == op["result"]["client_token"]
    assert op["result"]["touches"] == 1


@pytest.mark.postgres
async def test_same_key_same_body_is_the_same_operation(admin, db_url: str) -> None:
    first = await start(admin, "test/idem", key="k-idem")
    again = await start(admin, "test/idem", key="k-idem")
    assert first.status_code == again.status_code == 202
    assert first.json()["id"] == again.json()["id"]
    listed = (await admin.get("/api/v1/operations", params={"target": "test/idem"})).json()
    assert [o["id"] for o in listed["items"]] == [first.json()["id"]]


@pytest.mark.postgres
async def test_fifty_concurrent_requests_make_one_operation(admin, cloud: FakeCloud,
                                                            db_url: str) -> None:
    replies = await asyncio.gather(*(start(admin, "test/herd", key="k-herd") for _ in range(50)))
    assert {r.status_code for r in replies} == {202}, {r.text for r in replies}
    ids = {r.json()["id"] for r in replies}
    assert len(ids) == 1
    await settle(admin, ids.pop())
    listed = (await admin.get("/api/v1/operations", params={"target": "test/herd"})).json()
    assert len(listed["items"]) == 1
    assert len(cloud.entries()) == 1


@pytest.mark.postgres
async def test_same_key_different_body_is_409(admin, db_url: str) -> None:
    first = await start(admin, "test/reuse", key="k-reuse", delay=1)
    other = await start(admin, "test/reuse", key="k-reuse", delay=2)
    assert other.status_code == 409
    problem = other.json()
    assert problem["code"] == "idempotency_key_reused"
    assert problem["operation_id"] == first.json()["id"]
    assert other.headers["content-type"] == "application/problem+json"


@pytest.mark.postgres
async def test_second_mutation_on_a_busy_target_is_409(admin, clock: ManualClock,
                                                       db_url: str) -> None:
    clock.auto = False
    busy = (await start(admin, "test/busy", key="a", delay=60, poll=5)).json()
    await until(admin, busy["id"], IN_POLLING)
    second = await start(admin, "test/busy", key="b")
    assert second.status_code == 409
    assert second.json()["code"] == "target_busy"
    assert second.json()["operation_id"] == busy["id"]
    assert busy["id"] in second.json()["detail"]
    assert (await start(admin, "test/elsewhere", key="c")).status_code == 202

    clock.auto = True
    await clock.advance(120)
    assert (await settle(admin, busy["id"]))["status"] == "succeeded"
    assert (await start(admin, "test/busy", key="b")).status_code == 202


@pytest.mark.postgres
async def test_throttling_backs_off_inside_the_step(admin, cloud: FakeCloud, db_url: str) -> None:
    op = await settle(admin, (await start(admin, "test/throttle", fail="throttle:2")).json()["id"])
    assert op["status"] == "succeeded"
    touch = step(op, "touch")
    assert touch["detail"]["retries"] == 2
    messages = [e["message"] or "" for e in touch["history"]]
    assert sum("ThrottlingException" in m and "retrying at" in m for m in messages) == 2
    assert touch["attempt"] == 1
    assert len(cloud.entries()) == 1


@pytest.mark.postgres
async def test_non_retryable_error_fails_then_retry_step_resumes(admin, cloud: FakeCloud,
                                                                 db_url: str) -> None:
    op = await settle(admin, (await start(admin, "test/denied", fail="denied:1")).json()["id"])
    assert op["status"] == "failed"
    touch = step(op, "touch")
    assert touch["status"] == "failed"
    assert touch["error"]["code"] == "AccessDenied"
    assert touch["error"]["hint"]
    assert op["error"]["step"] == "touch" and op["error"]["code"] == "AccessDenied"
    assert step(op, "verify")["status"] == "pending"
    assert cloud.entries() == []

    later = await admin.post(f"/api/v1/operations/{op['id']}/steps/verify/retry")
    assert later.status_code == 409 and later.json()["code"] == "step_not_retryable"
    unknown = await admin.post(f"/api/v1/operations/{op['id']}/steps/nope/retry")
    assert unknown.status_code == 404

    r = await admin.post(f"/api/v1/operations/{op['id']}/steps/touch/retry")
    assert r.status_code == 202, r.text
    done = await settle(admin, op["id"])
    assert done["status"] == "succeeded" and done["error"] is None
    assert done["result"]["name"] == "test-denied"  # kept from the step that ran before
    assert step(done, "touch")["attempt"] == 2
    assert step(done, "prepare")["attempt"] == 1
    assert any("retry requested by t-admin" in (e["message"] or "")
               for e in step(done, "touch")["history"])
    assert len(cloud.entries()) == 1


@pytest.mark.postgres
async def test_cancel_is_cooperative_and_frees_the_target(admin, clock: ManualClock,
                                                          cloud: FakeCloud, db_url: str) -> None:
    clock.auto = False
    op = (await start(admin, "test/cancel", key="c1", delay=600, poll=5)).json()
    await until(admin, op["id"], IN_POLLING)
    r = await admin.post(f"/api/v1/operations/{op['id']}/cancel")
    assert r.status_code == 202
    assert r.json()["cancel_requested"] is True and r.json()["status"] == "running"

    await clock.advance(5)  # the poll sleep ends; the step sees the cancel and stops
    done = await settle(admin, op["id"])
    assert done["status"] == "cancelled"
    assert step(done, "touch")["status"] == "cancelled"
    assert step(done, "verify")["status"] == "pending"
    again = await admin.post(f"/api/v1/operations/{op['id']}/cancel")
    assert again.status_code == 409 and again.json()["code"] == "operation_finished"

    # The other operation is held polling (frozen clock), so it holds the target for sure.
    other = (await start(admin, "test/cancel", key="c2", delay=600, poll=5)).json()
    await until(admin, other["id"], IN_POLLING)
    busy = await admin.post(f"/api/v1/operations/{op['id']}/steps/touch/retry")
    assert busy.status_code == 409 and busy.json()["code"] == "target_busy"
    assert busy.json()["operation_id"] == other["id"]
    clock.auto = True
    await clock.advance(5)  # wakes its current poll; the auto clock does the rest
    await settle(admin, other["id"])
    assert (await admin.post(f"/api/v1/operations/{op['id']}/steps/touch/retry")).status_code == 202
    assert (await settle(admin, op["id"]))["status"] == "succeeded"
    assert len(cloud.entries()) == 3  # cancelled attempt, the other op, the retried attempt


async def test_retry_needs_a_finished_operation(admin, clock: ManualClock) -> None:
    clock.auto = False
    op = (await start(admin, "test/running", delay=600)).json()
    await until(admin, op["id"], IN_POLLING)
    r = await admin.post(f"/api/v1/operations/{op['id']}/steps/touch/retry")
    assert r.status_code == 409 and r.json()["code"] == "step_not_retryable"


async def test_wait_returns_the_current_state_at_timeout(admin, clock: ManualClock) -> None:
    clock.auto = False
    op = (await start(admin, "test/slow", delay=600, poll=5)).json()
    await until(admin, op["id"], IN_POLLING)
    waiting = asyncio.create_task(
        admin.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20}))
    start_at = clock.now()
    while not waiting.done():  # virtual seconds pass only when we say so
        await clock.advance(1)
        await asyncio.sleep(0.001)
    r = await waiting
    assert 20 <= (clock.now() - start_at).total_seconds() < 100
    assert r.status_code == 200
    assert r.json()["status"] == "running"
    too_long = await admin.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 51})
    assert too_long.status_code == 422


@pytest.mark.postgres
async def test_list_filters_and_pages(admin, db_url: str) -> None:
    ids = [(await start(admin, f"test/page-{i}")).json()["id"] for i in range(3)]
    for op_id in ids:
        await settle(admin, op_id)
    first = (await admin.get("/api/v1/operations", params={"limit": 2})).json()
    assert len(first["items"]) == 2 and first["next_cursor"]
    rest = (await admin.get("/api/v1/operations",
                            params={"limit": 2, "cursor": first["next_cursor"]})).json()
    assert rest["next_cursor"] is None
    seen = [o["id"] for o in first["items"] + rest["items"]]
    assert sorted(seen) == sorted(ids) and len(set(seen)) == 3
    assert first["items"][0]["steps"][0]["history"] is None
    only = (await admin.get("/api/v1/operations",
                            params={"target": "test/page-1", "status": "succeeded"})).json()
    assert [o["id"] for o in only["items"]] == [ids[1]]
    none = (await admin.get("/api/v1/operations", params={"status": "failed"})).json()
    assert none["items"] == []


async def test_roles_and_unknown_operations(app, admin, tokens_by_role) -> None:
    op = (await start(admin, "test/roles")).json()
    async with client_for(app, tokens_by_role["viewer"]) as viewer:
        assert (await viewer.get(f"/api/v1/operations/{op['id']}")).status_code == 200
        denied = await viewer.post(f"/api/v1/operations/{op['id']}/cancel")
        assert denied.status_code == 403 and denied.json()["code"] == "forbidden"
        assert (await start(viewer, "test/viewer")).status_code == 403
    async with client_for(app, None) as anon:
        assert (await anon.get("/api/v1/operations")).status_code == 401
    missing = await admin.get("/api/v1/operations/op-nope")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    audit = (await admin.get("/api/v1/audit", params={"action": "operation.test_start"})).json()
    # The start, and the viewer's refused start (refusals are audited too).
    assert [(a["operation_id"], a["result"]) for a in audit] == [
        (None, "error:forbidden"), (op["id"], "ok")]


async def test_test_workflow_needs_the_env_flag(admin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PODPLANE_TEST_WORKFLOWS")
    r = await start(admin, "test/off")
    assert r.status_code == 404 and r.json()["code"] == "not_found"


@pytest.mark.postgres
async def test_hostile_inputs_are_problems_not_500s(admin, db_url: str) -> None:
    probes = [
        admin.get("/api/v1/operations", params={"target": "a\x00b"}),
        admin.get("/api/v1/operations", params={"cursor": "../x"}),
        admin.get("/api/v1/operations/op%00x"),
        admin.get("/api/v1/operations/op-x/wait", params={"timeout": "nan"}),
        admin.post("/api/v1/operations/op-x/steps/a%20b/retry"),
        start(admin, "t\x00x"),
        admin.post("/api/v1/operations/_test", headers={"Idempotency-Key": "a b"},
                   json={"target": "test/x", "params": {}}),
    ]
    for r in await asyncio.gather(*probes):
        assert r.status_code in (404, 422), (r.request.url, r.status_code, r.text)
        assert r.headers["content-type"] == "application/problem+json"


async def test_a_polled_list_shows_every_change(admin, clock: ManualClock) -> None:
    """The list's JSON is kept while nothing changes (issue 21); any change shows at once."""
    clock.auto = False
    params = {"limit": 5}
    before = (await admin.get("/api/v1/operations", params=params)).json()["items"]
    op = (await start(admin, "test/polled", delay=600, poll=5)).json()
    await until(admin, op["id"], IN_POLLING)
    listed = (await admin.get("/api/v1/operations", params=params)).json()["items"]
    assert [o["id"] for o in listed] == [op["id"], *[o["id"] for o in before]][:5]
    assert listed[0]["status"] == "running"
    again = await admin.get("/api/v1/operations", params=params)
    assert again.json()["items"] == listed and again.headers["content-type"] == \
        "application/json"
    assert (await admin.post(f"/api/v1/operations/{op['id']}/cancel")).status_code == 202
    await clock.advance(5)  # the poll sleep ends; the step sees the cancel and stops
    await settle(admin, op["id"])
    after = (await admin.get("/api/v1/operations", params=params)).json()["items"]
    assert after[0]["id"] == op["id"] and after[0]["status"] == "cancelled"
