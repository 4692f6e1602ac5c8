"""Insufficient capacity fails the hyperpod step (the group's newest cluster event is an
ERROR) with a neutral hint; retrying it alone after the fault clears succeeds. With continuous
provisioning the cluster stays InService with what it got, so the retry creates nothing: it
waits for the group to fill."""

from __future__ import annotations

from tests.clusters.helpers import BODY, step, wait_done
from tests.stack import Stack


async def test_capacity_failure_then_retry_of_the_hyperpod_step(stack: Stack) -> None:
    fault = stack.fault(kind="insufficient_capacity", instance_type="ml.g5.8xlarge",
                        availability_zone="us-west-2a")
    body = {**BODY, "name": "cap", "deep_health_checks": False}
    async with stack.client("operator") as api:
        op = (await api.post("/api/v1/clusters", json=body)).json()
        busy = await api.post("/api/v1/clusters", json=body)
        assert busy.status_code == 409 and busy.json()["code"] == "target_busy"
        failed = await wait_done(api, op["id"])
        assert failed["status"] == "failed"
        hyperpod = step(failed, "hyperpod")
        assert hyperpod["status"] == "failed"
        assert hyperpod["error"]["code"] == "insufficient_capacity"
        # from the group's ERROR event (continuous provisioning), AWS's words only
        assert "sufficient capacity" in hyperpod["error"]["message"]
        assert "us-west-2" not in hyperpod["error"]["hint"]  # AWS names no AZ: neutral hint
        assert [s["status"] for s in failed["steps"][:5]] == ["succeeded"] * 5
        assert step(failed, "storage")["status"] == "pending"

        stack.clear_fault(fault["id"])
        retried = await api.post(f"/api/v1/operations/{op['id']}/steps/hyperpod/retry")
        assert retried.status_code in (200, 202), retried.text
        done = await wait_done(api, op["id"])
        assert done["status"] == "succeeded", [(s["name"], s["error"]) for s in done["steps"][5:]]
        assert step(done, "hyperpod")["attempt"] == 2
        assert step(done, "network")["attempt"] == 1
    assert len(stack.ledger(service="eks", action="CreateCluster")) == 1
    assert len(stack.ledger(service="sagemaker", action="CreateCluster")) == 1
    assert stack.ledger(service="sagemaker", action="DeleteCluster") == []
    described = stack.aws("sagemaker").describe_cluster(ClusterName="cap")
    assert described["ClusterStatus"] == "InService"
    assert "OnStartDeepHealthChecks" not in described["InstanceGroups"][0]
