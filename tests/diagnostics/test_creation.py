"""A cluster creation diagnosed with the cloud's own records: short of capacity, the failed
hyperpod step shows HyperPod's ERROR event about the group (ListClusterEvents); an add-on
that fails shows EKS's health issue (DescribeAddon). Each time the suggested retry, made
once the fault is gone, moves the creation on; at the end it is healthy. What changed is read
back from the sandbox."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.clusters.helpers import BODY, step, wait_done
from tests.diagnostics.conftest import perform, sources
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
NAME = "made"


async def _diagnosis(api: Any, op_id: str) -> dict[str, Any]:
    r = await api.get(f"/api/v1/operations/{op_id}/diagnosis")
    assert r.status_code == 200, r.text
    return dict(r.json())


async def _retry(stack: Stack, operator: Any, verdict: dict[str, Any], fault: str,
                 op_id: str) -> dict[str, Any]:
    stack.clear_fault(fault)
    r = await perform(operator, verdict["next"])
    assert r.status_code == 202, r.text
    return await wait_done(operator, op_id)


async def test_a_creation_short_of_capacity_then_with_a_failed_addon(stack: Stack) -> None:
    capacity = stack.fault(kind="insufficient_capacity", instance_type="ml.g5.8xlarge",
                           availability_zone="us-west-2a")
    body = {**BODY, "name": NAME, "deep_health_checks": False}
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        op = (await operator.post("/api/v1/clusters", json=body)).json()
        failed = await wait_done(operator, op["id"])
        assert step(failed, "hyperpod")["status"] == "failed", failed["steps"]
        verdict = await _diagnosis(viewer, op["id"])
        (finding,) = verdict["findings"]
        assert finding["check"] == "insufficient_capacity"
        assert "no capacity" in verdict["conclusion"]
        assert {"operation step", "hyperpod:ListClusterEvents"} <= sources(verdict)
        events = [e["detail"] for e in finding["evidence"]
                  if e["source"] == "hyperpod:ListClusterEvents"]
        assert events and all(e.startswith(("Error ", "Warn ")) for e in events)
        assert any("sufficient capacity" in e and "InstanceGroup" in e for e in events)
        assert verdict["next"]["arguments"] == {"operation_id": op["id"], "step": "hyperpod"}

        addon = stack.fault(kind="addon_failure", addon_name="coredns")
        failed = await _retry(stack, operator, verdict, capacity["id"], op["id"])
        assert failed["status"] == "failed", failed["steps"]
        bad = next(s for s in failed["steps"] if s["status"] == "failed")
        assert bad["error"]["code"] == "addon_failed", bad
        verdict = await _diagnosis(viewer, op["id"])
        (finding,) = verdict["findings"]
        assert finding["check"] == "addon_failed" and "EKS add-on" in verdict["conclusion"]
        issues = [e["detail"] for e in finding["evidence"] if e["source"] == "eks:DescribeAddon"]
        described = stack.aws("eks").describe_addon(clusterName=NAME, addonName="coredns")
        health = described["addon"]["health"]["issues"]
        assert health, described  # what EKS itself shows
        assert issues == [f"coredns {described['addon']['status']}: {health[0]['code']}: "
                          f"{health[0]['message']}"
                          + (f" ({', '.join(health[0]['resourceIds'])})"
                             if health[0].get("resourceIds") else "")]
        assert verdict["next"]["arguments"] == {"operation_id": op["id"],
                                                "step": bad["name"]}

        done = await _retry(stack, operator, verdict, addon["id"], op["id"])
        assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
        after = await _diagnosis(viewer, op["id"])
        assert after["conclusion"] == "healthy" and after["findings"] == []
    eks = stack.aws("eks")
    assert eks.describe_addon(clusterName=NAME, addonName="coredns")["addon"]["status"] == \
        "ACTIVE"
    assert stack.aws("sagemaker").describe_cluster(ClusterName=NAME)["ClusterStatus"] == \
        "InService"
