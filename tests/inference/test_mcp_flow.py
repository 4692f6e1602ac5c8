"""An agent deploys a model, calls it and scales it through MCP in at most eight tool calls
(counted on the MCP client); Kubernetes then shows two Ready pods and the engine's own
counter the calls that went through. The tool annotations say which tools read and which
destroy."""

from __future__ import annotations

import pytest

from podplane.mcp.tools import BY_NAME
from tests.inference.conftest import endpoint_pods, ready, settle
from tests.jobs.test_mcp_recipes import Counted
from tests.mcp.conftest import mcp_client
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MAX_CALLS = 8


async def test_annotations_say_read_only_and_destructive() -> None:
    hints = {name: (BY_NAME[name].annotations()["readOnlyHint"],
                    BY_NAME[name].annotations()["destructiveHint"])
             for name in ("endpoint_list", "endpoint_get", "endpoint_invoke",
                          "endpoint_create", "endpoint_scale", "endpoint_delete",
                          "endpoint_update")}
    assert hints == {"endpoint_list": (True, False), "endpoint_get": (True, False),
                     "endpoint_invoke": (True, False), "endpoint_create": (False, False),
                     "endpoint_scale": (False, False), "endpoint_delete": (False, True),
                     "endpoint_update": (False, False)}
    assert "confirm" in BY_NAME["endpoint_delete"].input_schema()["required"]


async def test_deploy_invoke_scale_from_mcp_in_eight_calls(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        agent = Counted(client)
        body = {"cluster": "alpha", "name": "agent-llm", "instance_group": group,
                "model": "Qwen/Qwen2.5-0.5B-Instruct", "max_model_len": 4096}
        plan = (await agent("endpoint_create", **body, dry_run=True))["result"]["plan"]
        assert (plan["gpus_per_node"], plan["gpus_requested"], plan["gpus_free"]) == (1, 1, 2)
        created = await agent("endpoint_create", **body)
        assert created["next"]["tool"] == "operation_wait"
        waited = await agent("operation_wait", operation_id=created["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        answer = (await agent("endpoint_invoke", cluster="alpha", name="agent-llm",
                              prompt="What is a GPU?", max_tokens=8))["result"]
        assert answer["response"]["usage"]["completion_tokens"] == 8
        scaled = await agent("endpoint_scale", cluster="alpha", name="agent-llm", replicas=2)
        waited = await agent("operation_wait", operation_id=scaled["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        view = (await agent("endpoint_get", cluster="alpha", name="agent-llm"))["result"]
        assert (view["ready_replicas"], view["status"]) == (2, "Ready"), view
        assert agent.calls <= MAX_CALLS, agent.calls
    settle(stack)
    pods = endpoint_pods(stack, "agent-llm")
    assert len(pods) == 2 and all(ready(p) for p in pods)
    # Each pod's own counter, read with kubectl through the proxy (it takes the ready pods in
    # turn): one request served, by one of the two pods, with the prompt's 4 tokens.
    served = sorted(_counter(stack.kubectl(
        "get", "--raw", "/api/v1/namespaces/default/services/agent-llm:8000/proxy/metrics"))
        for _ in pods)
    assert served == [(0.0, 0.0), (1.0, 4.0)], served


def _counter(metrics: str) -> tuple[float, float]:
    values = dict(line.rsplit(" ", 1) for line in metrics.splitlines()
                  if line and not line.startswith("#"))
    label = '{model_name="agent-llm"}'
    return (float(values["vllm:request_success_total" + label]),
            float(values["vllm:prompt_tokens_total" + label]))
