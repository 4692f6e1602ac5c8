"""Endpoints over REST on a podplane-created cluster (two one-GPU g5 nodes): refusals name the
field and create nothing; a vLLM endpoint deploys as a Deployment + ClusterIP Service that
kubectl shows; invoke goes through the API server's service proxy to the engine; scale 1 -> 2
gives two Ready pods; delete needs confirm and leaves nothing."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.api.routers.endpoints import EndpointMutationOut, EndpointNoChangeOut, ScalePlanOut
from tests.groups.conftest import finish
from tests.inference.conftest import (
    ENDPOINTS,
    endpoint_pods,
    kubectl_json,
    owned_objects,
    ready,
    settle,
)
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"


def field_of(problem: dict[str, object]) -> object:
    """The field a 422 names: the service's `field`, or the schema error's location."""
    if "field" in problem:
        return problem["field"]
    errors = problem["errors"]
    assert isinstance(errors, list)
    return ".".join(errors[0]["loc"][1:])


async def test_refusals_name_the_field_and_change_nothing(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    base = {"name": "refused", "instance_group": group, "model": MODEL}
    cases = [({"tensor_parallel": 2}, "tensor_parallel"),  # g5.xlarge has one GPU
             ({"name": "Bad_Name"}, "name"),
             ({"instance_group": "nope"}, "instance_group"),
             ({"engine": "sglang", "model": "s3://bucket/llama"}, "model"),
             ({"engine": "tgi"}, "engine"),
             ({"replicas": 0}, "replicas"),
             # a path that does not descend (source_paths.py; kubernetes
             # validateLocalDescendingPath refuses a '..' subPath)
             ({"model": "s3://bucket/models/.."}, "model"),
             ({"kind": "managed", "model": "fsx:."}, "model")]
    async with stack.client("operator") as api:
        for change, field in cases:
            r = await api.post(ENDPOINTS, json={**base, **change})
            assert r.status_code == 422, (change, r.text)
            assert r.headers["content-type"] == "application/problem+json"
            assert field_of(r.json()) == field, (change, r.json())
        r = await api.post(ENDPOINTS, json={**base, "tensor_parallel": 2})
        assert "has 1 GPU(s) per node" in r.json()["detail"]
        r = await api.post(ENDPOINTS, json={**base, "model": "s3://bucket/a/../b"})
        assert "may not have . or .. segments" in r.json()["detail"], r.text
        r = await api.post(ENDPOINTS, json={**base, "replicas": 3})  # 2 one-GPU nodes
        assert r.status_code == 409 and r.json()["code"] == "insufficient_gpus", r.text
        assert "2 free on the 2 healthy node(s)" in r.json()["detail"]
        r = await api.post(ENDPOINTS, params={"dry_run": "true"}, json=base)
        assert r.status_code == 200 and r.json()["dry_run"] is True, r.text
        assert [m["kind"] for m in r.json()["plan"]["manifests"]] == ["Deployment", "Service"]
        EndpointNoChangeOut.model_validate(r.json())  # the documented shape is the one sent
        await _load_balancers_are_internal_unless_an_admin_agreed(stack, api, base)
        settings = stack.app.state.podplane.settings   # an admin restricts registries
        settings.allowed_image_registries = ["public.ecr.aws"]
        try:
            r = await api.post(ENDPOINTS, params={"dry_run": "true"},
                               json={**base, "image": "attacker.example.com/miner:1"})
            assert r.status_code == 422 and field_of(r.json()) == "image", r.text
            r = await api.post(ENDPOINTS, params={"dry_run": "true"}, json=base)
            assert r.status_code == 200, r.text   # the engine's pinned image is always allowed
        finally:
            settings.allowed_image_registries = []
    settle(stack)
    assert owned_objects(stack) == []
    assert kubectl_json(stack, "get", "deployments", "-n", "default")["items"] == []


async def test_deploy_invoke_scale_delete(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={"name": "qwen", "instance_group": group,
                                            "model": MODEL, "max_model_len": 2048})
        assert r.status_code == 202, r.text
        done = await finish(api, r.json())
        assert done["status"] == "succeeded", done

        dep = kubectl_json(stack, "get", "deployment", "qwen", "-n", "default")
        assert dep["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "podplane"
        assert dep["status"]["readyReplicas"] == 1
        engine = dep["spec"]["template"]["spec"]["containers"][0]
        assert engine["image"] == "docker.io/vllm/vllm-openai:v0.9.0"
        assert engine["resources"]["limits"]["nvidia.com/gpu"] in (1, "1")
        assert engine["args"][:2] == ["--model", MODEL] and "2048" in engine["args"]
        svc = kubectl_json(stack, "get", "service", "qwen", "-n", "default")
        assert svc["spec"]["type"] == "ClusterIP"
        assert svc["spec"]["selector"] == {"podplane.io/endpoint": "qwen"}
        assert [p["port"] for p in svc["spec"]["ports"]] == [8000]

        r = await api.post(f"{ENDPOINTS}/qwen/invoke", json={"prompt": "Say hello to me",
                                                            "max_tokens": 5})
        assert r.status_code == 200, r.text
        answer = r.json()["response"]
        assert answer["object"] == "text_completion" and answer["model"] == "qwen"
        assert answer["usage"] == {"prompt_tokens": 4, "completion_tokens": 5,
                                   "total_tokens": 9}
        assert len(answer["choices"][0]["text"].split()) == 5
        r = await api.post(f"{ENDPOINTS}/qwen/invoke", json={"prompt": "Hi", "chat": True})
        assert r.json()["response"]["choices"][0]["message"]["role"] == "assistant", r.text
        # The engine's own counter, read with kubectl through the same proxy (not podplane).
        metrics = stack.kubectl("get", "--raw", "/api/v1/namespaces/default/services/"
                                "qwen:8000/proxy/metrics")
        assert 'vllm:request_success_total{model_name="qwen"} 2.0' in metrics

        r = await api.patch(f"{ENDPOINTS}/qwen", json={"replicas": 2})
        assert r.status_code == 202, r.text
        plan = EndpointMutationOut.model_validate(r.json()).plan
        assert isinstance(plan, ScalePlanOut) and (plan.from_, plan.to) == (1, 2)
        assert (await finish(api, r.json()))["status"] == "succeeded"
        pods = endpoint_pods(stack, "qwen")
        assert len(pods) == 2 and all(ready(p) for p in pods), pods
        assert len({p["spec"]["nodeName"] for p in pods}) == 2  # one GPU per node
        r = await api.patch(f"{ENDPOINTS}/qwen", json={"replicas": 3})  # no GPU left
        assert r.status_code == 409 and r.json()["code"] == "insufficient_gpus", r.text
        got = (await api.get(f"{ENDPOINTS}/qwen")).json()
        assert (got["replicas"], got["ready_replicas"], got["status"]) == (2, 2, "Ready")
        listed = (await api.get(ENDPOINTS)).json()
        assert [(e["name"], e["engine"], e["model"]) for e in listed] == [
            ("qwen", "vllm", MODEL)]

        r = await api.delete(f"{ENDPOINTS}/qwen")
        assert r.status_code == 403  # operator: a destroy needs admin
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{ENDPOINTS}/qwen")
        assert r.status_code == 428, r.text
        r = await admin.delete(f"{ENDPOINTS}/qwen", params={"confirm": "true"})
        assert r.status_code == 202, r.text
        assert (await finish(admin, r.json()))["status"] == "succeeded"
        assert (await admin.get(f"{ENDPOINTS}/qwen")).status_code == 404
    settle(stack)
    assert endpoint_pods(stack, "qwen") == []
    assert owned_objects(stack) == []


async def test_invoke_without_ready_pod_is_503(cluster: tuple[Stack, str]) -> None:
    """Scaled to zero, the Service has no endpoint: the API server's proxy answers 503 and
    podplane says so (endpoint_unavailable), never a 500."""
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={"name": "idle", "instance_group": group,
                                            "model": MODEL, "engine": "sglang",
                                            "exposure": "load_balancer"})
        assert (await finish(api, r.json()))["status"] == "succeeded"
        svc = kubectl_json(stack, "get", "service", "idle", "-n", "default")
        assert svc["spec"]["type"] == "LoadBalancer"
        assert svc["spec"]["ports"][0]["port"] == 30000
        r = await api.post(ENDPOINTS, json={"name": "idle", "instance_group": group,
                                            "model": MODEL})
        assert r.status_code == 409 and r.json()["code"] == "endpoint_exists", r.text
        r = await api.patch(f"{ENDPOINTS}/idle", json={"replicas": 0})
        assert (await finish(api, r.json()))["status"] == "succeeded"
        r = await api.post(f"{ENDPOINTS}/idle/invoke", json={"prompt": "anyone?"})
        assert r.status_code == 503, r.text
        assert r.json()["code"] == "endpoint_unavailable"
        async with stack.client("viewer") as viewer:  # invoke spends GPU time: operator
            r = await viewer.post(f"{ENDPOINTS}/idle/invoke", json={"prompt": "x"})
            assert r.status_code == 403, r.text
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{ENDPOINTS}/idle", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
    assert owned_objects(stack) == []


async def test_an_image_that_cannot_pull_fails_the_create_with_the_reason(
        cluster: tuple[Stack, str]) -> None:
    """kubelet cannot pull the image: the create's `ready` step gives up after its deadline
    (virtual time) and names each pod's waiting reason, as kubelet reported it."""
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={"name": "nopull", "instance_group": group,
                                            "model": MODEL,
                                            "image": "docker.io/vllm/vllm-openai:v0.0.404"})
        assert r.status_code == 202, r.text
        op = r.json()
        for _ in range(200):  # each wait lets the step's own sleeps move virtual time 20 s
            op = (await api.get(f"/api/v1/operations/{op['id']}/wait",
                                params={"timeout": 20})).json()
            if op["status"] in ("succeeded", "failed"):
                break
        done = op
    assert done["status"] == "failed", done
    error = done["error"]
    assert error["step"] == "ready" and error["code"] == "endpoint_not_ready", error
    assert "0 of 1 replicas Ready" in error["message"]
    assert "ImagePullBackOff" in error["message"] or "ErrImagePull" in error["message"]
    pods = endpoint_pods(stack, "nopull")
    assert len(pods) == 1 and not ready(pods[0])
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{ENDPOINTS}/nopull", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
    assert owned_objects(stack) == []


async def _load_balancers_are_internal_unless_an_admin_agreed(stack: Stack, api: Any,
                                                              base: dict[str, Any]) -> None:
    """Issue 34, S6: exposure=load_balancer is internal to the VPC; internet-facing needs an
    admin, source ranges and confirm, and each refusal names why and creates nothing."""
    lb = {**base, "exposure": "load_balancer"}
    r = await api.post(ENDPOINTS, params={"dry_run": "true"}, json=lb)
    assert r.status_code == 200, r.text
    svc = r.json()["plan"]["manifests"][1]
    assert svc["spec"]["type"] == "LoadBalancer"
    assert svc["metadata"]["annotations"] == {
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true"}
    public = {**lb, "public": True, "source_ranges": ["203.0.113.0/24"]}
    r = await api.post(ENDPOINTS, json=public)
    assert r.status_code == 403 and r.json()["code"] == "forbidden", r.text
    async with stack.client("admin") as admin:
        r = await admin.post(ENDPOINTS, json={**public, "source_ranges": []})
        assert r.status_code == 422 and field_of(r.json()) == "source_ranges", r.text
        r = await admin.post(ENDPOINTS, json={**public, "exposure": "service",
                                              "source_ranges": []})
        assert r.status_code == 422 and field_of(r.json()) == "public", r.text
        r = await admin.post(ENDPOINTS, json=public)
        assert r.status_code == 428 and r.json()["code"] == "confirmation_required", r.text
        r = await admin.post(ENDPOINTS, params={"dry_run": "true"}, json=public)
        assert r.status_code == 200, r.text
    svc = r.json()["plan"]["manifests"][1]
    assert svc["metadata"]["annotations"] == {
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}
    assert svc["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]
