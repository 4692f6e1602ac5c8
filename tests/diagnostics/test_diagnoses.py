"""Each diagnosis against the sandbox: a fault that produces the real signal -> the verdict
names the cause and its evidence -> making the suggested call fixes it; a healthy target is
"healthy" with no findings; a viewer may diagnose but not act. What changed is read back from
the sandbox (boto3, the ledger, Kubernetes), not from our own answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.client.client import Client

from tests.diagnostics.conftest import CLUSTER, node_id, perform, settle, sources
from tests.groups.conftest import finish
from tests.mcp.conftest import mcp_client, structured
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
NODES = f"/api/v1/clusters/{CLUSTER}/nodes"


def diagnosis_of(node: str) -> str:
    return f"/api/v1/clusters/{CLUSTER}/diagnostics/nodes/{node}"


async def test_a_healthy_node_and_a_succeeded_operation_are_healthy(stack: Stack) -> None:
    iid = node_id(stack)
    settle(stack)
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        r = await viewer.get(diagnosis_of(f"hyperpod-{iid}"))
        assert r.status_code == 200, r.text
        verdict = r.json()
        assert verdict["conclusion"] == "healthy" and verdict["findings"] == []
        assert verdict["status"] == "ok" and verdict["next"] is None
        assert verdict["target"] == f"cluster/{CLUSTER}/node/{iid}"

        done = await finish(operator, (await operator.post(f"{NODES}/{iid}/reboot")).json())
        assert done["status"] == "succeeded", done
        op = (await viewer.get(f"/api/v1/operations/{done['id']}/diagnosis")).json()
        assert op["conclusion"] == "healthy" and op["findings"] == [] and op["next"] is None

        missing = await viewer.get(diagnosis_of("i-0000000000000dead"))
        assert missing.status_code == 404 and missing.json()["code"] == "not_found"
        bad = await viewer.get(diagnosis_of("node-1"))
        assert bad.status_code == 422
        no_op = await viewer.get("/api/v1/operations/op-nope/diagnosis")
        assert no_op.status_code == 404 and no_op.json()["code"] == "not_found"


async def test_a_denied_reboot_is_diagnosed_and_its_suggested_retry_finishes_it(
    stack: Stack,
) -> None:
    iid = node_id(stack)
    fault = stack.fault(kind="access_denied", service="sagemaker",
                        action="BatchRebootClusterNodes")
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        failed = await finish(operator, (await operator.post(f"{NODES}/{iid}/reboot")).json())
        assert failed["status"] == "failed", failed
        r = await viewer.get(f"/api/v1/operations/{failed['id']}/diagnosis")
        assert r.status_code == 200, r.text
        verdict = r.json()
        assert verdict["status"] == "fail"
        assert "sagemaker:BatchRebootClusterNodes" in verdict["conclusion"]
        (finding,) = verdict["findings"]
        assert finding["check"] == "access_denied"
        assert "sagemaker:BatchRebootClusterNodes" in finding["fix"]
        assert [e["source"] for e in finding["evidence"]] == ["operation step"]
        assert "not authorized to perform" in finding["evidence"][0]["detail"]
        assert verdict["next"] == {
            "tool": "operation_retry_step", "mutates": True,
            "arguments": {"operation_id": failed["id"], "step": "reboot"},
            "cost": verdict["next"]["cost"]}

        assert (await perform(viewer, verdict["next"])).status_code == 403
        stack.clear_fault(fault["id"])  # the fix: the identity may call the action again
        retried = await perform(operator, verdict["next"])
        assert retried.status_code in (200, 202), retried.text
        done = await finish(operator, retried.json())
        assert done["status"] == "succeeded", done
        after = (await viewer.get(f"/api/v1/operations/{failed['id']}/diagnosis")).json()
        assert after["conclusion"] == "healthy" and after["findings"] == []
    node = stack.aws("sagemaker").describe_cluster_node(ClusterName=CLUSTER, NodeId=iid)
    assert node["NodeDetails"]["InstanceStatus"]["Status"] == "Running"


async def test_a_node_flagged_for_reboot_names_the_fault_and_the_reboot_clears_it(
    stack: Stack,
) -> None:
    iid = node_id(stack)
    reboots = len(stack.ledger(service="sagemaker", action="BatchRebootClusterNodes"))
    stack.fault(kind="node_unhealthy", cluster=CLUSTER, instance_id=iid, action="reboot",
                reason="NvidiaErrorReboot:XidHardwareFailure")
    settle(stack)  # the node controller copies HyperPod's health onto the Node
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        verdict = (await viewer.get(diagnosis_of(iid))).json()
        assert verdict["status"] == "fail", verdict
        assert "reboot" in verdict["conclusion"] and "NvidiaErrorReboot" in verdict["conclusion"]
        health = verdict["findings"][0]
        assert health["check"] == "health_label"
        proof = json.dumps(health["evidence"])
        assert "sagemaker.amazonaws.com/node-health-status=UnschedulablePendingReboot" in proof
        assert "NvidiaErrorReboot-XidHardwareFailure" in proof
        assert {"hyperpod:ListClusterNodes", "kubernetes:Node labels", "kubernetes:Node taints",
                "kubernetes:Node conditions", "hyperpod:ListClusterEvents"} <= sources(verdict)
        event = next(e["detail"] for e in health["evidence"]  # the newest first
                     if e["source"] == "hyperpod:ListClusterEvents")
        assert event.startswith("Warn ") and f"Instance {iid}" in event
        assert "failed a health check (NvidiaErrorReboot:XidHardwareFailure)" in event
        assert verdict["since"]  # the fault condition's lastTransitionTime
        assert [c["tool"] for c in verdict["ladder"]] == ["node_describe", "node_reboot",
                                                          "node_replace"]
        assert "kept" in verdict["ladder"][1]["cost"]
        assert "lost" in verdict["ladder"][2]["cost"]
        assert verdict["next"] == verdict["ladder"][1]
        assert verdict["next"]["arguments"] == {"cluster": CLUSTER, "node": iid}

        assert (await perform(viewer, verdict["next"])).status_code == 403
        r = await perform(operator, verdict["next"])
        assert r.status_code == 202, r.text
        assert (await finish(operator, r.json()))["status"] == "succeeded"
        settle(stack)
        after = (await viewer.get(diagnosis_of(iid))).json()
        assert after["conclusion"] == "healthy" and after["findings"] == [], after
    assert len(stack.ledger(service="sagemaker", action="BatchRebootClusterNodes")) == \
        reboots + 1
    labels = json.loads(stack.kubectl("get", "node", f"hyperpod-{iid}", "-o", "json"))[
        "metadata"]["labels"]
    assert labels["sagemaker.amazonaws.com/node-health-status"] == "Schedulable"


class Agent:
    """A scripted agent on MCP alone, counting its tool calls."""

    def __init__(self, client: Client) -> None:
        self.client, self.calls = client, 0

    async def __call__(self, tool: str, **args: Any) -> Any:
        self.calls += 1
        return await self.client.call_tool(tool, args)


async def test_an_agent_diagnoses_a_sick_node_and_reboots_it_after_confirmation(
    stack: Stack,
) -> None:
    iid = node_id(stack)
    stack.fault(kind="node_unhealthy", cluster=CLUSTER, instance_id=iid, action="reboot",
                reason="NvidiaErrorReboot:XidHardwareFailure")
    settle(stack)
    reboots = len(stack.ledger(service="sagemaker", action="BatchRebootClusterNodes"))
    async with mcp_client(stack.app, stack.tokens["viewer"]) as client:
        viewer = Agent(client)
        listed = {t.name for t in (await client.list_tools()).tools}
        assert {"diagnose_node", "diagnose_operation"} <= listed and "node_reboot" not in listed
        seen = structured(await viewer("diagnose_node", cluster=CLUSTER, node=iid))["result"]
        assert seen["next"]["tool"] == "node_reboot" and seen["next"]["mutates"]
        refused = await viewer(seen["next"]["tool"], **seen["next"]["arguments"])
        assert refused.is_error
    assert node_health(stack, iid) == "UnschedulablePendingReboot"  # the viewer changed nothing
    assert len(stack.ledger(service="sagemaker", action="BatchRebootClusterNodes")) == reboots

    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        agent = Agent(client)
        verdict = structured(await agent("diagnose_node", cluster=CLUSTER, node=iid))["result"]
        step = verdict["next"]
        assert step["mutates"] and user_confirms(verdict)  # asked, then made
        started = structured(await agent(step["tool"], **step["arguments"]))
        op = started["result"]
        while op["status"] not in ("succeeded", "failed", "cancelled") and agent.calls < 7:
            op = structured(await agent("operation_wait", operation_id=op["id"]))["result"]
        assert op["status"] == "succeeded", op
        settle(stack)
        after = structured(await agent("diagnose_node", cluster=CLUSTER, node=iid))["result"]
        assert after["conclusion"] == "healthy" and after["findings"] == []
        print(f"\nagent: diagnose + reboot + wait + diagnose in {agent.calls} tool calls")
        assert agent.calls <= 8, agent.calls
    assert node_health(stack, iid) == "Schedulable"


def user_confirms(verdict: dict[str, Any]) -> bool:
    """The person reads the conclusion and the cost, and says yes."""
    return bool(verdict["conclusion"] and verdict["next"]["cost"])


def node_health(stack: Stack, iid: str) -> str:
    node = json.loads(stack.kubectl("get", "node", f"hyperpod-{iid}", "-o", "json"))
    return str(node["metadata"]["labels"]["sagemaker.amazonaws.com/node-health-status"])
