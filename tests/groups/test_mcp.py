"""The same group and node flows through the MCP in-process client: same operations, same
results as REST, with the operation and operation_wait named in every mutation's answer."""

from __future__ import annotations

from typing import Any

from mcp.client.client import Client

from tests.groups.conftest import FIRST_GROUP, Cluster
from tests.mcp.conftest import mcp_client, structured


async def wait_done(client: Client, op_id: str) -> dict[str, Any]:
    """What an agent does: follow the `next` hint (operation_wait) until nothing is left."""
    call: dict[str, Any] = {"tool": "operation_wait", "arguments": {"operation_id": op_id}}
    for _ in range(100):
        out = structured(await client.call_tool(call["tool"], call["arguments"]))
        if out["next"] is None or out["next"]["tool"] != "operation_wait":
            return dict(out["result"])
        call = out["next"]
    raise AssertionError(f"{op_id} never finished")


async def tool(client: Client, tool_name: str, **args: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool_name, args))


async def test_group_and_node_flows_through_mcp_match_rest(cluster: Cluster) -> None:
    stack, app = cluster.stack, cluster.stack.app
    async with mcp_client(app, stack.tokens["admin"]) as agent, stack.client("admin") as rest:
        added = await tool(agent, "instance_group_add", cluster="gpu", name="spot-b",
                           instance_type="ml.g5.8xlarge", count=1, capacity_type="spot",
                           availability_zone="us-west-2a")
        op = added["result"]
        assert op["kind"] == "instance_group.add" and added["status_tool"] == "operation_wait"
        assert added["next"]["tool"] == "operation_wait"
        assert op["requested_by"]["face"] == "agent"
        finished = await wait_done(agent, op["id"])
        assert finished["status"] == "succeeded", finished
        via_rest = (await rest.get(f"/api/v1/operations/{op['id']}")).json()
        via_mcp = (await tool(agent, "operation_get", operation_id=op["id"],
                              history=True))["result"]
        assert via_mcp == via_rest

        assert (await tool(agent, "node_list", cluster="gpu"))["result"] == \
            (await rest.get("/api/v1/clusters/gpu/nodes")).json()
        assert (await tool(agent, "instance_group_list", cluster="gpu"))["result"] == \
            (await rest.get("/api/v1/clusters/gpu/instance-groups")).json()

        same = await tool(agent, "instance_group_scale", cluster="gpu", group="spot-b", count=1)
        assert same["result"]["changed"] is False and same["done"] is True
        assert same["result"] == (await rest.patch("/api/v1/clusters/gpu/instance-groups/spot-b",
                                                   json={"count": 1})).json()

        (node,) = cluster.nodes_of("spot-b")
        refused = await agent.call_tool("node_replace", {"cluster": "gpu",
                                                         "node": node["InstanceId"]})
        assert refused.is_error
        assert structured(refused)["error"]["code"] == "confirmation_required"
        plan = await tool(agent, "node_replace", cluster="gpu", node=node["InstanceId"],
                          dry_run=True, confirm=True)
        assert "instance storage" in plan["result"]["plan"]["warning"]
        replaced = await tool(agent, "node_replace", cluster="gpu", node=node["InstanceId"],
                              confirm=True)
        done = await wait_done(agent, replaced["result"]["id"])
        assert done["status"] == "succeeded", done
        new_id = done["result"]["new_instance_id"]
        described = await tool(agent, "node_describe", cluster="gpu", node=new_id)
        assert described["result"]["health"]["state"] == "healthy"
        assert described["result"]["instance_group"] == "spot-b"

        deleted = await tool(agent, "instance_group_delete", cluster="gpu", group="spot-b",
                             confirm=True)
        assert (await wait_done(agent, deleted["result"]["id"]))["status"] == "succeeded"
        groups = (await tool(agent, "instance_group_list", cluster="gpu"))["result"]
    assert [g["name"] for g in groups] == [FIRST_GROUP]
    ops = await _ops(rest_client=stack.client("viewer"))
    assert sorted(o["kind"] for o in ops) == ["instance_group.add", "instance_group.delete",
                                              "node.replace"]
    assert {o["requested_by"]["face"] for o in ops} == {"agent"}


async def _ops(rest_client: Any) -> list[dict[str, Any]]:
    async with rest_client as c:
        return list((await c.get("/api/v1/operations")).json()["items"])
