"""An agent deploys a managed endpoint (the HyperPod inference operator serves it), waits,
calls it and scales it through MCP in at most eight tool calls (counted on the MCP client);
Kubernetes then shows the config's replicas and two Ready pods of the operator's
Deployment. The same from JumpStart: a gated model the user accepted the licence of
(`accept_eula`), answered by the LMI container the operator runs for it."""

from __future__ import annotations

from podplane.domain.inference import managed
from podplane.domain.inference.managed_views import JUMPSTART_KIND
from podplane.services.cloud_access import cloud_of
from tests.features.conftest import BUCKET
from tests.features.test_inference_operator import _enable, _prerequisites
from tests.groups.conftest import CLUSTER, FIRST_GROUP, Cluster
from tests.groups.conftest import cluster as group_cluster  # noqa: F401 - fixture reuse
from tests.inference.test_managed_endpoints import feature_cluster  # noqa: F401
from tests.inference.test_managed_operations import grow, pods
from tests.jobs.test_mcp_recipes import Counted
from tests.mcp.conftest import mcp_client

MAX_CALLS = 8


async def operator_on_two_nodes(cluster: Cluster) -> None:
    _prerequisites(cluster, "cert-manager", "aws-mountpoint-s3-csi-driver",
                   "aws-fsx-csi-driver")
    await _enable(cluster)
    grow(cluster, 2)


async def test_deploy_wait_invoke_scale_managed_from_mcp_in_eight_calls(
        feature_cluster: Cluster) -> None:  # noqa: F811
    cluster = feature_cluster
    await operator_on_two_nodes(cluster)
    stack = cluster.stack
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        agent = Counted(client)
        created = await agent("endpoint_create", cluster=CLUSTER, name="llama", kind="managed",
                              instance_group=FIRST_GROUP, model=f"s3://{BUCKET}/models/llama/",
                              routing="prefixaware", kv_cache="l1")
        assert created["next"]["tool"] == "operation_wait", created
        waited = await agent("operation_wait", operation_id=created["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        answer = (await agent("endpoint_invoke", cluster=CLUSTER, name="llama",
                              prompt="What is a GPU?", max_tokens=8))["result"]
        assert answer["response"]["usage"]["completion_tokens"] == 8
        scaled = await agent("endpoint_scale", cluster=CLUSTER, name="llama", replicas=2)
        waited = await agent("operation_wait", operation_id=scaled["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        view = (await agent("endpoint_get", cluster=CLUSTER, name="llama"))["result"]
        assert (view["kind"], view["ready_replicas"], view["routing"], view["kv_cache"]) == (
            "managed", 2, "prefixaware", "l1"), view
        assert agent.calls <= MAX_CALLS, agent.calls
    kube = await cloud_of(stack.app.state.podplane).kube_for(CLUSTER)
    config = await kube.get(managed.API_VERSION, managed.KIND, "llama", "default")
    assert config is not None and config["spec"]["replicas"] == 2
    assert config["spec"]["intelligentRoutingSpec"]["routingStrategy"] == "prefixaware"
    running = await pods(cluster)
    assert len(running) == 2 and all(p["status"]["phase"] == "Running" for p in running)


async def test_jumpstart_model_from_mcp_in_eight_calls(
        feature_cluster: Cluster) -> None:  # noqa: F811
    await operator_on_two_nodes(feature_cluster)
    gated = {"model": "jumpstart:meta-textgeneration-llama-3-1-8b-instruct",
             "accept_eula": True}   # the user read and accepted its licence
    stack, cluster = feature_cluster.stack, feature_cluster
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        agent = Counted(client)
        created = await agent("endpoint_create", cluster=CLUSTER, name="llama", kind="managed",
                              instance_group=FIRST_GROUP, **gated)
        waited = await agent("operation_wait", operation_id=created["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        said = (await agent("endpoint_invoke", cluster=CLUSTER, name="llama",
                            prompt="What is a GPU?", max_tokens=8))["result"]
        assert said["path"] == "/invocations", said
        assert said["response"]["details"]["generated_tokens"] == 8, said
        assert len(said["response"]["generated_text"].split()) == 8, said
        chat = (await agent("endpoint_invoke", cluster=CLUSTER, name="llama", chat=True,
                            prompt="And a TPU?", max_tokens=4))["result"]
        assert chat["response"]["usage"]["completion_tokens"] == 4, chat
        scaled = await agent("endpoint_scale", cluster=CLUSTER, name="llama", replicas=2)
        waited = await agent("operation_wait", operation_id=scaled["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        view = (await agent("endpoint_get", cluster=CLUSTER, name="llama"))["result"]
        assert (view["engine"], view["ready_replicas"]) == ("jumpstart", 2), view
        assert agent.calls <= MAX_CALLS, agent.calls
    kube = await cloud_of(stack.app.state.podplane).kube_for(CLUSTER)
    model = await kube.get(managed.API_VERSION, JUMPSTART_KIND, "llama", "default")
    assert model is not None and model["spec"]["model"]["acceptEula"] is True
    assert model["spec"]["replicas"] == 2 and model["status"]["state"] == "DeploymentComplete"
    running = await pods(cluster)
    assert len(running) == 2 and all(p["status"]["phase"] == "Running" for p in running)
