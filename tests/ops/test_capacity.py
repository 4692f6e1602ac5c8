"""Capacity is a person's decision: the engine does not retry it (the step fails with its hint,
retry-step is the decision), while throttling keeps backing off inside the step."""

from __future__ import annotations

import pytest

from podplane_testkit.touch import FakeCloud
from tests.ops.conftest import settle, start, step


async def test_capacity_fails_the_step_at_once_and_retry_step_is_the_decision(
    admin, cloud: FakeCloud
) -> None:
    op = await settle(admin, (await start(admin, "test/cap", fail="capacity:1")).json()["id"])
    assert op["status"] == "failed"
    touch = step(op, "touch")
    assert touch["error"]["code"] == "insufficient_capacity"
    assert "capacity" in touch["error"]["hint"].lower()
    assert (touch["detail"] or {}).get("retries") is None  # never backed off
    assert not [e for e in touch["history"] if "retrying at" in (e["message"] or "")]
    assert cloud.entries() == []

    r = await admin.post(f"/api/v1/operations/{op['id']}/steps/touch/retry")
    assert r.status_code == 202, r.text
    done = await settle(admin, op["id"])
    assert done["status"] == "succeeded"
    assert step(done, "touch")["attempt"] == 2
    assert len(cloud.entries()) == 1


@pytest.mark.parametrize("fault", ["throttle:3"])
async def test_transient_errors_still_back_off(admin, cloud: FakeCloud, fault: str) -> None:
    op = await settle(admin, (await start(admin, "test/slow", fail=fault)).json()["id"])
    assert op["status"] == "succeeded"
    touch = step(op, "touch")
    assert touch["detail"]["retries"] == 3 and touch["attempt"] == 1
    assert len(cloud.entries()) == 1
