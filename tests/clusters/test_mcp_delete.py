"""The agent's path: inspect, plan, create with the MCP tool, then delete (confirm needed).

Delete tears down in order and leaves nothing tagged for the cluster but the data bucket.
"""

from __future__ import annotations

from typing import Any

from mcp.client.client import Client

from tests.clusters.helpers import BODY, TERMINAL
from tests.mcp.conftest import mcp_client, structured
from tests.polling import poll
from tests.stack import Stack


async def finish(client: Client, op_id: str) -> dict[str, Any]:
    """operation_get until terminal (in the stepping sandbox, operation_wait would step the
    clock itself; the engine's sleeps are what move time here)."""

    async def read() -> dict[str, Any]:
        out = structured(await client.call_tool("operation_get", {"operation_id": op_id}))
        return dict(out["result"])

    return await poll(read, lambda op: op["status"] in TERMINAL, f"{op_id} never finished")


async def test_mcp_create_then_delete(stack: Stack) -> None:
    args = {k: v for k, v in BODY.items() if k != "region"} | {"name": "beta",
                                                                 "deep_health_checks": False}
    async with mcp_client(stack.app, stack.tokens["admin"]) as agent:
        listed = structured(await agent.call_tool("cluster_list", {}))["result"]
        assert listed["managed"] == []
        azs = structured(await agent.call_tool("region_list_azs", {}))["result"]
        assert [a["name"] for a in azs][:2] == ["us-west-2a", "us-west-2b"]
        plan = structured(await agent.call_tool("cluster_plan_create", args))["result"]
        assert plan["blocked"] is False and plan["node_recovery"] == "Automatic"

        started = structured(await agent.call_tool("cluster_create", args))
        assert started["status_tool"] == "operation_wait"
        assert started["next"]["tool"] == "operation_wait"
        done = await finish(agent, started["result"]["id"])
        assert done["status"] == "succeeded", done["steps"]
        status = structured(await agent.call_tool("cluster_get_status", {"name": "beta"}))
        assert status["result"]["hyperpod"]["status"] == "InService"
        unchanged = structured(await agent.call_tool("cluster_create", args))
        assert unchanged["result"] == {"changed": False, "plan": []} and unchanged["done"]

        refused = await agent.call_tool("cluster_delete", {"name": "beta"})
        assert refused.is_error
        deleting = structured(await agent.call_tool("cluster_delete",
                                                    {"name": "beta", "confirm": True}))
        gone = await finish(agent, deleting["result"]["id"])
        assert gone["status"] == "succeeded", gone["steps"]
        assert structured(await agent.call_tool("cluster_list", {}))["result"]["managed"] == []
    assert stack.aws("eks").list_clusters()["clusters"] == []
    assert stack.aws("sagemaker").list_clusters()["ClusterSummaries"] == []
    ec2 = stack.aws("ec2")
    mine = [{"Name": "tag:podplane:cluster", "Values": ["beta"]}]
    assert ec2.describe_vpcs(Filters=mine)["Vpcs"] == []
    assert ec2.describe_subnets(Filters=mine)["Subnets"] == []
    assert [e["action"] for e in stack.ledger(service="sagemaker")
            if e["action"].endswith("Cluster")] == ["CreateCluster", "DeleteCluster"]
    assert stack.aws("s3").list_objects_v2(Bucket=status["result"]["facts"]["bucket"])[
        "KeyCount"] == 1  # the data bucket is kept


async def test_operator_cannot_delete(stack: Stack) -> None:
    async with stack.client("operator") as api:
        r = await api.delete("/api/v1/clusters/whatever")
        assert r.status_code == 403
