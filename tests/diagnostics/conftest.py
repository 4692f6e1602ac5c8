"""One stack per module with a cluster set up in the sandbox (as tests/groups does) and
registered as imported, with NodeRecovery None: HyperPod then never repairs a node by
itself, so what fixes a sick node in these tests is the action the diagnosis suggested."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from podplane.bootstrap import build_app
from podplane.cloud.virtual_clock import SteppingClock
from podplane.domain.effects import Role
from podplane.mcp.tools import BY_NAME
from podplane.settings import Settings
from podplane.store import clusters as cluster_rows
from tests.conftest import mint
from tests.groups import conftest as groups
from tests.stack import SandboxThread, Stack

CLUSTER = groups.CLUSTER


def _create(stack: Stack) -> str:
    vpc, compute, private, sg = groups._network(stack)
    groups._identity(stack)
    eks = stack.aws("eks").create_cluster(
        name=CLUSTER, roleArn="arn:aws:iam::123456789012:role/eks",
        resourcesVpcConfig={"subnetIds": private, "securityGroupIds": [sg]},
        accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})["cluster"]
    stack.advance(15 * 60)
    stack.aws("sagemaker").create_cluster(
        ClusterName=CLUSTER, Orchestrator={"Eks": {"ClusterArn": eks["arn"]}},
        VpcConfig={"SecurityGroupIds": [sg], "Subnets": [compute]}, NodeRecovery="None",
        InstanceGroups=[{
            "InstanceGroupName": groups.FIRST_GROUP, "InstanceType": groups.FIRST_TYPE,
            "InstanceCount": 1, "LifeCycleConfig": groups.LIFECYCLE,
            "ExecutionRole": groups.ROLE, "ThreadsPerCore": 1}])
    stack.advance(15 * 60)
    return vpc


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    tmp = tmp_path_factory.mktemp("diagnose")
    sandbox = SandboxThread(tmp / "cloud")
    settings = Settings(home=tmp / "cp", database_url=f"sqlite:///{tmp / 'cp.db'}",
                        aws_endpoint_url=sandbox.box.aws_url)
    app = build_app(settings)
    app.state.podplane.ops_clock = SteppingClock(sandbox.box.aws_url, sandbox.box.secret)
    try:
        async with app.router.lifespan_context(app):
            tokens = {r.value: await mint(app, f"stack-{r.value}", r) for r in Role}
            stack = Stack(sandbox, app, tokens)
            vpc = _create(stack)
            async with app.state.podplane.sessions.begin() as db:
                await cluster_rows.upsert(
                    db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
                    hyperpod_cluster_name=CLUSTER, origin="imported", state="active", spec={},
                    facts={"network": {"vpc_id": vpc}})
            await groups._device_plugins(stack)  # the health agent reports fault labels
            yield stack
    finally:
        sandbox.stop()


def node_id(stack: Stack) -> str:
    (node,) = stack.aws("sagemaker").list_cluster_nodes(ClusterName=CLUSTER)[
        "ClusterNodeSummaries"]
    return str(node["InstanceId"])


def settle(stack: Stack, seconds: float = 10) -> None:
    """Past the node controller's period, then until the sandbox's controllers are idle."""
    stack.advance(seconds)
    stack.sandbox.call(stack.sandbox.kube.settle())


def sources(verdict: dict[str, Any]) -> set[str]:
    return {e["source"] for f in verdict["findings"] for e in f["evidence"]}


async def perform(client: Any, call: dict[str, Any]) -> Any:
    """Make a suggested call exactly as suggested: its tool's REST request (mcp/tools.py),
    path arguments in the path, the others in the query (GET) or the body."""
    tool = BY_NAME[call["tool"]]
    args = dict(call["arguments"])
    path = tool.path.format(**{name: args.pop(name) for name in tool.path_params})
    if tool.method == "GET":
        return await client.get(path, params=args)
    return await client.request(tool.method, path, json=args)
