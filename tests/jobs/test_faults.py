"""A node fault mid-job (an NVIDIA Xid error HyperPod marks for replacement): the training
operator restarts the job within its budget on a healthy node, the job view shows the node and
the cause and the budget decrements; a second fault past the budget fails the job with that
reason; workers gone silent get the job restarted by the operator's hang rule. Asserted on what
the Kubernetes API holds and on podplane's view of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.groups.conftest import finish
from tests.jobs.conftest import CLUSTER, JOBS, apply_plan, job, pods, settle, submit
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
XID = "NvidiaErrorReboot:XidHardwareFailure"


def running_pod(stack: Stack, name: str) -> dict[str, str]:
    found = [p for p in pods(stack, HPJob=name).values()
             if p["status"].get("phase") == "Running"
             and not p["metadata"].get("deletionTimestamp")]
    assert len(found) == 1, [(p["metadata"]["name"], p["status"].get("phase")) for p in found]
    return {"pod": found[0]["metadata"]["name"], "node": found[0]["spec"]["nodeName"],
            "uid": found[0]["metadata"]["uid"]}


def hyperpod_job(stack: Stack, name: str) -> dict[str, object]:
    found = stack.sandbox.kube.get(CLUSTER).store.find(
        "sagemaker.amazonaws.com/hyperpodpytorchjobs", "default", name)
    assert found is not None
    return dict(found)


async def test_a_hung_job_is_restarted_by_its_hanging_rule_and_the_view_says_why(
        cluster: tuple[Stack, str], tmp_path: Path) -> None:
    """podplane's manifest carries the operator's JobHangingDetection rule (a progress line at
    least every 900 s); workers that go silent (a hung collective, applied with kubectl as any
    tool could) get the job restarted by the operator, and the view names the rule."""
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(JOBS, params={"dry_run": "true"}, json={
            "name": "silent", "recipe": "pytorch-ddp", "instance_group": group,
            "replicas": 1, "max_restarts": 2})
        assert r.status_code == 200, r.text
        manifest = r.json()["plan"]["manifest"]
        rules = manifest["spec"]["runPolicy"]["logMonitoringConfiguration"]
        assert {rule["name"] for rule in rules} == {"JobStart", "JobHangingDetection"}
        template = manifest["spec"]["replicaSpecs"][0]["template"]
        template.setdefault("metadata", {}).setdefault("annotations", {}).update({
            "sandbox.podplane.io/hang-after-seconds": "20",
            "sandbox.podplane.io/duration-seconds": "7200"})
        apply_plan(stack, tmp_path, r.json()["plan"], manifest)
        settle(stack, 10)
        first = running_pod(stack, "silent")
        assert (await job(api, "silent"))["restarts"]["spent"] == 0
        settle(stack, 960)  # silent since 20 s: past 900 s the rule finds the job HANGING
        view = await job(api, "silent")
    assert view["restarts"] == {"budget": 2, "spent": 1, "remaining": 1}, view["restarts"]
    fault = view["last_fault"]
    assert fault["reason"] == "JobRestarting" and fault["pods"] == [first["pod"]]
    assert "log monitoring rule JobHangingDetection" in fault["message"], fault
    assert "HANGING" in fault["message"]
    async with stack.client("admin") as admin:  # the module's tests leave no job running
        r = await admin.delete(f"{JOBS}/silent", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"


async def test_a_node_fault_restarts_within_budget_then_fails_past_it(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        await submit(api, name="resilient", recipe="pytorch-ddp", instance_group=group,
                     max_restarts=1, params={"epochs": 1})
        settle(stack, 10)
        first = running_pod(stack, "resilient")
        before = await job(api, "resilient")
        assert before["restarts"] == {"budget": 1, "spent": 0, "remaining": 1}
        assert before["pods"][0]["node_verdict"]["health"] == "Schedulable"

        stack.fault(kind="node_unhealthy", cluster=CLUSTER, instance_id=first["node"].removeprefix(
            "hyperpod-"), action="replace", reason=XID)
        settle(stack, 5)  # the node's labels follow HyperPod's verdict (node controller poll)
        status = hyperpod_job(stack, "resilient")["status"]
        assert isinstance(status, dict)
        assert status["restartCount"] == 1
        assert status["latestFaultyPodInstanceList"]["faultyInstanceIdList"] == [
            first["node"].removeprefix("hyperpod-")]
        settle(stack, 10)  # the old pod is gone, the new one placed away from the faulty node
        second = running_pod(stack, "resilient")
        assert second["node"] != first["node"] and second["uid"] != first["uid"]
        view = await job(api, "resilient")
        assert view["status"] == "Running"
        assert view["restarts"] == {"budget": 1, "spent": 1, "remaining": 0}
        fault = view["last_fault"]
        assert fault["instance_ids"] == [first["node"].removeprefix("hyperpod-")]
        assert fault["reason"] == "JobRestarting"
        assert first["node"] in fault["message"] and "XidHardwareFailure" in fault["message"]
        assert "UnschedulablePendingReplacement" in fault["message"]
        assert view["pods"][0]["node"] == second["node"]
        assert view["pods"][0]["node_verdict"]["schedulable"] is True
        events = (await api.get(f"/api/v1/clusters/{CLUSTER}/jobs/resilient/events")).json()
        assert any(e["reason"] == "JobRestarting" for e in events), events

        stack.fault(kind="node_unhealthy", cluster=CLUSTER, instance_id=second["node"]
                    .removeprefix("hyperpod-"), action="reboot", reason=XID)
        settle(stack, 5)
        view = await job(api, "resilient")
        assert view["status"] == "Failed", view
        failed = next(c for c in view["conditions"] if c["type"] == "Failed")
        assert failed["reason"] == "MaxRetryCountExceeded"
        assert second["node"] in failed["message"] and "UnschedulablePendingReboot" in \
            failed["message"]
        assert view["restarts"]["spent"] == 1 and view["restarts"]["remaining"] == 0
        assert view["last_fault"]["instance_ids"] == [second["node"].removeprefix("hyperpod-")]
        assert view["pods"][0]["node_verdict"]["health"] == "UnschedulablePendingReboot"
        assert view["pods"][0]["node_verdict"]["schedulable"] is False

