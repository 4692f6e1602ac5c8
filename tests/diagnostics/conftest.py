"""One stack per module with a cluster set up in the sandbox (as tests/groups does) and
registered as imported, with NodeRecovery None: HyperPod then never repairs a node by
itself, so what fixes a sick node in these tests is the action the diagnosis suggested. Its
NodeProvisioningMode is Continuous, as podplane's creates make it, so it has cluster events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from podplane.mcp.tools import BY_NAME
from podplane.store import clusters as cluster_rows
from tests.groups import conftest as groups
from tests.stack import Stack, running_stack

CLUSTER = groups.CLUSTER


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path_factory.mktemp("diagnose")) as made:
        vpc, compute, private, sg = groups._network(made)
        groups._create(made, compute, private, sg, node_recovery="None")
        # continuous provisioning, as podplane creates clusters: HyperPod records events
        made.aws("sagemaker").update_cluster(ClusterName=CLUSTER,
                                             NodeProvisioningMode="Continuous")
        made.advance(60)
        async with made.app.state.podplane.sessions.begin() as db:
            await cluster_rows.upsert(
                db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
                hyperpod_cluster_name=CLUSTER, origin="imported", state="active", spec={},
                facts={"network": {"vpc_id": vpc}})
        await groups._device_plugins(made)  # the health agent reports fault labels
        yield made


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
