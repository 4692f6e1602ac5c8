"""Targets nest: a change to a cluster conflicts with changes to its groups and nodes, and the
other way round; the refusal names the operation that holds the tree. Siblings do not block."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.ops.clock import ManualClock
from tests.ops.conftest import settle, start, until


def in_polling(op: dict[str, Any]) -> bool:
    return any(s["phase"] == "polling" for s in op["steps"])


async def _busy(admin, holder: str, other: str, key: str) -> None:  # type: ignore[no-untyped-def]
    refused = await start(admin, other, key=key)
    assert refused.status_code == 409, refused.text
    problem = refused.json()
    assert problem["code"] == "target_busy"
    assert problem["operation_id"] == holder and holder in problem["detail"]
    listed = (await admin.get("/api/v1/operations", params={"target": other})).json()
    assert listed["items"] == []  # the refused start wrote nothing


@pytest.mark.postgres
@pytest.mark.parametrize(("held", "refused", "free"), [
    ("cluster/n", ["cluster/n/node/i-1", "cluster/n/instance-groups"], "cluster/m/node/i-1"),
    ("cluster/n/node/i-1", ["cluster/n"], "cluster/n/node/i-2"),
    ("cluster/n/instance-groups", ["cluster/n"], "cluster/n/node/i-3"),
])
async def test_a_cluster_and_its_groups_and_nodes_change_one_at_a_time(
    admin, clock: ManualClock, db_url: str, held: str, refused: list[str], free: str
) -> None:
    clock.auto = False
    holder = (await start(admin, held, key="h", delay=60, poll=5)).json()
    await until(admin, holder["id"], in_polling)
    for i, target in enumerate(refused):
        await _busy(admin, holder["id"], target, f"r{i}")
    sibling = await start(admin, free, key="f")
    assert sibling.status_code == 202, sibling.text

    clock.auto = True
    await clock.advance(120)
    assert (await settle(admin, holder["id"]))["status"] == "succeeded"
    assert (await settle(admin, sibling.json()["id"]))["status"] == "succeeded"
    after = await start(admin, refused[0], key="after")
    assert after.status_code == 202, after.text
    assert (await settle(admin, after.json()["id"]))["status"] == "succeeded"


@pytest.mark.postgres
async def test_retrying_a_step_is_refused_while_something_nested_runs(
    admin, clock: ManualClock, db_url: str
) -> None:
    failed = await settle(admin, (await start(admin, "cluster/r", fail="denied:1")).json()["id"])
    assert failed["status"] == "failed"
    clock.auto = False
    node = (await start(admin, "cluster/r/node/i-9", key="n", delay=60, poll=5)).json()
    await until(admin, node["id"], in_polling)
    retry = await admin.post(f"/api/v1/operations/{failed['id']}/steps/touch/retry")
    assert retry.status_code == 409 and retry.json()["code"] == "target_busy"
    assert retry.json()["operation_id"] == node["id"]
    still = (await admin.get(f"/api/v1/operations/{failed['id']}")).json()
    assert still["status"] == "failed" and still["revision"] == failed["revision"]
    clock.auto = True
    await clock.advance(120)
    await settle(admin, node["id"])
    assert (await admin.post(f"/api/v1/operations/{failed['id']}/steps/touch/retry")
            ).status_code == 202
    assert (await settle(admin, failed["id"]))["status"] == "succeeded"
