"""Endpoint diagnosis on a cluster podplane created (two g5.8xlarge nodes, one GPU each): a
serving endpoint is healthy; an image that cannot pull, more replicas than GPUs, a scale to
zero and an engine that dies of a CUDA OOM are each named with their evidence, and the
suggested call, made as suggested, brings the endpoint back. Faults come from kubectl, as
any tool could make them; results are read back from Kubernetes and the sandbox's ledger."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from podplane.domain.inference.shutdown import GRACE_SECONDS
from tests.diagnostics.conftest import perform, sources
from tests.groups.conftest import finish
from tests.jobs.conftest import CLUSTER, cluster, settle  # noqa: F401
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
ENDPOINTS = f"/api/v1/clusters/{CLUSTER}/endpoints"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
GOOD = "docker.io/vllm/vllm-openai:v0.9.0"
BAD = "docker.io/vllm/vllm-openai:v0.0.404"


def diagnosis(name: str) -> str:
    return f"/api/v1/clusters/{CLUSTER}/diagnostics/endpoints/{name}"


def checks(verdict: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in verdict["findings"]}


def proof(finding: dict[str, Any]) -> str:
    return "\n".join(f"{e['source']}: {e['detail']}" for e in finding["evidence"])


def deployment(stack: Stack) -> dict[str, Any]:
    return dict(json.loads(stack.kubectl("get", "deployment", "diag", "-n", "default", "-o",
                                         "json")))


async def diagnose(stack: Stack, viewer: httpx.AsyncClient) -> dict[str, Any]:
    """A viewer's diagnosis, checked to change nothing: no cloud mutation, same Deployment."""
    ledger, version = len(stack.ledger()), deployment(stack)["metadata"]["resourceVersion"]
    r = await viewer.get(diagnosis("diag"))
    assert r.status_code == 200, r.text
    assert len(stack.ledger()) == ledger
    assert deployment(stack)["metadata"]["resourceVersion"] == version
    return dict(r.json())


async def fix(stack: Stack, operator: httpx.AsyncClient, viewer: httpx.AsyncClient,
              call: dict[str, Any]) -> None:
    """A viewer may not make the suggested call; the operator makes it as suggested."""
    assert call["mutates"] is True
    assert (await perform(viewer, call)).status_code == 403
    done = await finish(operator, (await perform(operator, call)).json())
    assert done["status"] == "succeeded", done
    settle(stack, 10)


async def healthy(stack: Stack, viewer: httpx.AsyncClient) -> None:
    verdict = await diagnose(stack, viewer)
    assert verdict["conclusion"] == "healthy" and verdict["findings"] == [], verdict


async def test_each_reason_an_endpoint_does_not_serve_and_the_call_that_fixes_it(
        cluster: tuple[Stack, str]) -> None:  # noqa: F811
    stack, group = cluster
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        r = await operator.post(ENDPOINTS, json={"name": "diag", "instance_group": group,
                                                 "model": MODEL})
        assert (await finish(operator, r.json()))["status"] == "succeeded"
        await healthy(stack, viewer)
        assert (await viewer.get(diagnosis("nope"))).status_code == 404

        stack.kubectl("scale", "deployment/diag", "--replicas=3", "-n", "default")
        settle(stack, 10)
        verdict = await diagnose(stack, viewer)
        assert "cannot be placed" in verdict["conclusion"], verdict
        assert "Insufficient nvidia.com/gpu" in verdict["conclusion"]
        assert verdict["next"]["tool"] == "endpoint_scale"
        assert verdict["next"]["arguments"] == {"cluster": CLUSTER, "name": "diag",
                                                "replicas": 2}
        await fix(stack, operator, viewer, verdict["next"])
        await healthy(stack, viewer)

        r = await operator.patch(f"{ENDPOINTS}/diag", json={"replicas": 0})
        assert (await finish(operator, r.json()))["status"] == "succeeded"
        settle(stack, 10)
        verdict = await diagnose(stack, viewer)
        assert verdict["status"] == "warn" and "scaled to zero" in verdict["conclusion"]
        assert verdict["next"]["arguments"] == {"cluster": CLUSTER, "name": "diag",
                                                "replicas": 1}
        await fix(stack, operator, viewer, verdict["next"])
        await healthy(stack, viewer)

        stack.kubectl("set", "image", "deployment/diag", f"engine={BAD}", "-n", "default")
        settle(stack, 30)
        verdict = await diagnose(stack, viewer)  # the old pod serves: the rollout is stuck
        found = checks(verdict)
        assert verdict["status"] == "fail" and "cannot pull image" in verdict["conclusion"]
        assert BAD in found["image_pull"]["detail"], verdict
        assert "ErrImagePull" in proof(found["image_pull"]) or \
            "ImagePullBackOff" in proof(found["image_pull"])
        assert "rollout_stuck" in found and "no_ready_endpoints" not in found
        assert "2 in all, for 1 replica" in found["rollout_stuck"]["detail"]
        assert {"kubernetes:Pod status", "kubernetes:Deployment status"} <= sources(verdict)
        assert verdict["next"]["arguments"] == {"cluster": CLUSTER, "name": "diag",
                                                "image": GOOD}
        stack.kubectl("scale", "deployment/diag", "--replicas=0", "-n", "default")
        settle(stack, GRACE_SECONDS + 10)  # the serving pod's preStop sleep, then it is gone
        stack.kubectl("scale", "deployment/diag", "--replicas=1", "-n", "default")
        settle(stack, 30)
        verdict = await diagnose(stack, viewer)  # now only pods that cannot pull
        found = checks(verdict)
        assert "cannot pull image" in verdict["conclusion"] and "no_ready_endpoints" in found
        assert "requests get 503" in found["no_ready_endpoints"]["detail"]
        assert "Ready=False" in proof(found["no_ready_endpoints"])
        assert verdict["next"]["tool"] == "endpoint_update"
        assert verdict["next"]["arguments"] == {"cluster": CLUSTER, "name": "diag",
                                                "image": GOOD}
        await fix(stack, operator, viewer, verdict["next"])
        await healthy(stack, viewer)

        patch = {"spec": {"template": {"metadata": {"annotations": {
            "sandbox.podplane.io/crash": "cuda_oom", "sandbox.podplane.io/exit-code": "1",
            "sandbox.podplane.io/duration-seconds": "20"}}}}}
        stack.kubectl("patch", "deployment/diag", "-n", "default", "--type=merge", "-p",
                      json.dumps(patch))
        settle(stack, 30)
        settle(stack, 30)
        verdict = await diagnose(stack, viewer)
        found = checks(verdict)
        assert "GPU ran out of memory" in verdict["conclusion"], verdict
        assert "(previous run) on node hyperpod-" in proof(found["cuda_oom"])
        assert "torch.OutOfMemoryError: CUDA out of memory." in proof(found["cuda_oom"])
        assert "CrashLoopBackOff" in proof(found["crash_loop"])
        assert "pod log" in sources(verdict)
        assert verdict["next"]["tool"] == "endpoint_get" and not verdict["next"]["mutates"]
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{ENDPOINTS}/diag", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
    settle(stack, 5)
