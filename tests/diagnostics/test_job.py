"""A job diagnosis on a cluster podplane created (tests/jobs: training operator installed): a
running job is healthy; a node fault past the job's restart budget fails it, and the verdict
names the failed condition, the flagged node and its labels, and suggests diagnosing that
node, whose own verdict's reboot repairs it so a resubmitted job runs there."""

from __future__ import annotations

import pytest

from tests.diagnostics.conftest import perform, sources
from tests.groups.conftest import finish
from tests.jobs.conftest import CLUSTER, cluster, pods, settle, submit  # noqa: F401
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
XID = "NvidiaErrorReboot:XidHardwareFailure"


def diagnosis(job: str) -> str:
    return f"/api/v1/clusters/{CLUSTER}/diagnostics/jobs/{job}"


def running_node(stack: Stack, job: str) -> str:
    (pod,) = [p for p in pods(stack, HPJob=job).values()
              if p["status"].get("phase") == "Running"]
    return str(pod["spec"]["nodeName"])


async def test_a_job_failed_by_a_node_fault_points_at_the_node_and_its_repair(
        cluster: tuple[Stack, str]) -> None:  # noqa: F811
    stack, group = cluster
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        await submit(operator, name="diag", recipe="pytorch-ddp", instance_group=group,
                     max_restarts=0, params={"epochs": 1})
        settle(stack, 10)
        node = running_node(stack, "diag")
        iid = node.removeprefix("hyperpod-")
        fine = (await viewer.get(diagnosis("diag"))).json()
        assert fine["conclusion"] == "healthy" and fine["findings"] == [], fine

        stack.fault(kind="node_unhealthy", cluster=CLUSTER, instance_id=iid, action="reboot",
                    reason=XID)
        settle(stack, 5)
        verdict = (await viewer.get(diagnosis("diag"))).json()
        assert verdict["status"] == "fail", verdict
        checks = {f["check"]: f for f in verdict["findings"]}
        assert "MaxRetryCountExceeded" in checks["job_failed"]["detail"]
        assert iid in checks["node_fault"]["detail"]
        assert "UnschedulablePendingReboot" in checks["node_fault"]["detail"]
        assert {"kubernetes:HyperPodPyTorchJob status", "kubernetes:Node labels"} <= \
            sources(verdict)
        assert verdict["next"]["tool"] == "diagnose_node" and not verdict["next"]["mutates"]
        assert verdict["next"]["arguments"] == {"cluster": CLUSTER, "node": iid}

        node_verdict = (await perform(viewer, verdict["next"])).json()
        assert node_verdict["next"]["tool"] == "node_reboot", node_verdict
        rebooted = await finish(operator, (await perform(operator, node_verdict["next"])).json())
        assert rebooted["status"] == "succeeded", rebooted
        settle(stack, 10)
        assert (await perform(viewer, verdict["next"])).json()["conclusion"] == "healthy"

        await submit(operator, name="diag-again", recipe="pytorch-ddp", instance_group=group,
                     max_restarts=0, params={"epochs": 1})
        settle(stack, 10)
        assert running_node(stack, "diag-again")
        again = (await viewer.get(diagnosis("diag-again"))).json()
        assert again["conclusion"] == "healthy" and again["findings"] == [], again
        assert (await viewer.get(diagnosis("nope"))).status_code == 404
        for job in ("diag", "diag-again"):  # leave no job running (tests/jobs' rule)
            r = await operator.post(f"/api/v1/clusters/{CLUSTER}/jobs/{job}/cancel")
            assert r.status_code in (200, 202), r.text


async def test_your_own_command_missing_from_its_image_is_named(
        cluster: tuple[Stack, str]) -> None:  # noqa: F811
    """A bring-your-own job whose argv names a program its image lacks never starts (runc:
    executable file not found, StartError exit 128); the diagnosis says so, not 'read the
    logs' (there are none)."""
    stack, group = cluster
    own = {"image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
           "command": ["deepspeed", "/data/my_script.py"]}
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        await submit(operator, name="no-such", instance_group=group, max_restarts=0,
                     container=own)
        settle(stack, 10)
        settle(stack, 10)
        verdict = (await viewer.get(diagnosis("no-such"))).json()
    assert verdict["status"] == "fail", verdict
    found = {f["check"]: f for f in verdict["findings"]}
    assert 'exec: "deepspeed": executable file not found in $PATH' in \
        found["start_error"]["detail"], verdict
    assert "exit_code" not in found
