"""The CLI (over real HTTP) and the MCP tools on the same feature: plan, enable, list with
the status tool reaching terminal, and disable; the agent's answers equal REST's."""

from __future__ import annotations

from tests.features.conftest import BASE
from tests.groups.conftest import Cluster
from tests.groups.test_cli import podplane, served  # noqa: F401 - fixture reuse
from tests.groups.test_mcp import tool, wait_done
from tests.mcp.conftest import mcp_client


async def test_cli_and_mcp_switch_keda(cluster: Cluster, served: str) -> None:  # noqa: F811
    stack = cluster.stack
    before = len(stack.ledger())
    plan = await podplane(cluster, served, "feature", "plan", "gpu", "keda", "--on")
    assert plan.exit_code == 0, plan.output
    assert "create  kube apps/v1 Deployment keda/keda-operator" in plan.output
    assert len(stack.ledger()) == before

    on = await podplane(cluster, served, "feature", "enable", "gpu", "keda")
    assert on.exit_code == 0, on.output
    assert "succeeded" in on.output
    listed = await podplane(cluster, served, "feature", "list", "gpu", role="viewer")
    assert listed.exit_code == 0
    row = next(line for line in listed.output.splitlines() if " keda " in f" {line} ")
    assert "on" in row and "drifted" not in row
    refused = await podplane(cluster, served, "feature", "disable", "gpu", "keda",
                             role="viewer")
    assert refused.exit_code == 1 and "forbidden" in refused.output

    async with mcp_client(stack.app, stack.tokens["operator"]) as agent, \
            stack.client("operator") as rest:
        via_mcp = (await tool(agent, "feature_list", cluster="gpu"))["result"]
        assert via_mcp == (await rest.get(BASE)).json()
        # kedacore/keda config/: CRDs, namespace, SA, RBAC, Deployments, Services, APIService
        planned = await tool(agent, "feature_plan", cluster="gpu", feature="keda",
                             enabled=False)
        assert [a["verb"] for a in planned["result"]["plan"]["actions"]] == ["delete"] * 19
        off = await tool(agent, "feature_set", cluster="gpu", feature="keda", enabled=False)
        assert off["status_tool"] == "operation_wait"
        assert off["result"]["requested_by"]["face"] == "agent"
        done = await wait_done(agent, off["result"]["id"])
        assert done["status"] == "succeeded", done
        same = await tool(agent, "feature_set", cluster="gpu", feature="keda", enabled=False)
        assert same["result"]["changed"] is False
