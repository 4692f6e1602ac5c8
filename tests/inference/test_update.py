"""Updating an endpoint's pod template on a podplane-created cluster (two one-GPU g5 nodes):
the diff contract (same values change nothing, dry_run plans), validation as create does it,
a good update that rolls out and ends with a real request, and a bad image that rolls back
with kubelet's pull error while the endpoint keeps answering every request sent to it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import pytest_asyncio

from podplane.api.routers.endpoints import EndpointNoChangeOut, UpdatePlanOut
from tests.groups.conftest import finish
from tests.inference.conftest import (
    ENDPOINTS,
    endpoint_pods,
    kubectl_json,
    owned_objects,
    ready,
    settle,
)
from tests.sandbox_kube.test_eks_auth import POLICY, kube
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
OLD, NEW = "docker.io/vllm/vllm-openai:v0.9.0", "docker.io/vllm/vllm-openai:latest"
MISSING = "docker.io/vllm/vllm-openai:v0.0.404"
URL = f"{ENDPOINTS}/served"


def deployment(stack: Stack) -> dict[str, Any]:
    return dict(kubectl_json(stack, "get", "deployment", "served", "-n", "default"))


def images(stack: Stack) -> list[tuple[str, str, bool]]:
    """(pod uid, image, Ready) of each pod of the endpoint that is not being deleted."""
    return sorted((p["metadata"]["uid"], p["spec"]["containers"][0]["image"], ready(p))
                  for p in endpoint_pods(stack, "served"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(cluster: tuple[Stack, str]) -> Stack:
    """One Ready vLLM endpoint `served` (one replica; the other node's GPU stays free)."""
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={"name": "served", "instance_group": group,
                                            "model": MODEL})
        assert (await finish(api, r.json()))["status"] == "succeeded"
    return stack


async def test_same_values_dry_run_and_refusals_change_nothing(served: Stack) -> None:
    before = deployment(served)
    async with served.client("operator") as api:
        r = await api.patch(URL, json={"image": OLD, "dtype": "auto"})  # what it runs now
        assert r.status_code == 200, r.text
        assert r.json() == {"changed": False, "dry_run": False,
                            "plan": {"endpoint": "served", "changes": {}}}
        r = await api.patch(URL, json={"max_model_len": 2048, "dry_run": True})
        assert r.status_code == 200 and r.json()["dry_run"] is True, r.text
        plan = EndpointNoChangeOut.model_validate(r.json()).plan
        assert isinstance(plan, UpdatePlanOut)
        assert plan.changes["max_model_len"].to == 2048 and plan.changes[
            "max_model_len"].from_ is None
        assert plan.manifest and "2048" in plan.manifest["spec"]["template"]["spec"][
            "containers"][0]["args"]
        assert plan.gpus_free == 1  # the rollout's one extra pod fits the other node
        for body, field in (({"tensor_parallel": 2}, "tensor_parallel"),  # 1 GPU per node
                            ({"pipeline_parallel": 2}, "pipeline_parallel"),
                            ({"dtype": "int3"}, "dtype"),
                            ({"replicas": 2, "image": NEW}, "replicas"),
                            ({}, "replicas")):
            r = await api.patch(URL, json=body)
            assert r.status_code == 422, (body, r.text)
            problem = r.json()
            got = problem.get("field") or ".".join(problem["errors"][0]["loc"][1:])
            assert got == field, (body, problem)
    async with served.client("viewer") as viewer:
        assert (await viewer.patch(URL, json={"image": NEW})).status_code == 403
    after = deployment(served)
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert after["spec"]["template"] == before["spec"]["template"]


async def test_an_update_rolls_out_and_ends_with_a_real_request(served: Stack) -> None:
    (old_uid, _, _), = images(served)
    async with served.client("operator") as api:
        r = await api.patch(URL, json={"image": NEW, "max_model_len": 2048})
        assert r.status_code == 202, r.text
        done = await finish(api, r.json())
    assert done["status"] == "succeeded", done
    assert done["result"]["rollout"] == {"ok": True}
    smoke = done["result"]["smoke"]
    assert smoke["ok"] and smoke["status"] == 200 and len(smoke["text"].split()) == 8
    assert done["result"]["rolled_back"] is False
    settle(served)
    pods = images(served)
    assert [(image, ok) for _, image, ok in pods] == [(NEW, True)]
    assert pods[0][0] != old_uid  # a new pod; the old one is gone
    dep = deployment(served)
    engine = dep["spec"]["template"]["spec"]["containers"][0]
    assert engine["image"] == NEW and "2048" in engine["args"]
    assert dep["status"]["updatedReplicas"] == dep["status"]["readyReplicas"] == 1
    # the engine behind the Service served the smoke request: its own counter says so
    metrics = served.kubectl("get", "--raw", "/api/v1/namespaces/default/services/"
                             "served:8000/proxy/metrics")
    assert 'vllm:request_success_total{model_name="served"} 1.0' in metrics


async def _invoke(api: httpx.AsyncClient, counts: dict[str, int]) -> None:
    counts["sent"] += 1
    r = await api.post(f"{URL}/invoke", json={"prompt": "still there?", "max_tokens": 2})
    if r.status_code == 200 and r.json()["response"]["choices"][0]["text"]:
        counts["answered"] += 1


async def test_an_image_that_cannot_pull_rolls_back_and_the_endpoint_keeps_serving(
        served: Stack) -> None:
    (serving_uid, image, _), = images(served)
    template = deployment(served)["spec"]["template"]
    counts = {"sent": 0, "answered": 0}
    async with served.client("operator") as api:
        r = await api.patch(URL, json={"image": MISSING})
        assert r.status_code == 202, r.text
        op, seen_new_pod = r.json(), False
        for _ in range(100):  # each wait lets the steps' own sleeps move virtual time
            op = (await api.get(f"/api/v1/operations/{op['id']}/wait",
                                params={"timeout": 20})).json()
            seen_new_pod = seen_new_pod or any(i == MISSING for _, i, _ in images(served))
            for _ in range(3):
                await _invoke(api, counts)
            if op["status"] in ("succeeded", "failed"):
                break
    print(f"\nrequests during the bad update: {counts['sent']} sent, "
          f"{counts['answered']} answered")
    assert counts["sent"] >= 9 and counts["answered"] == counts["sent"], counts
    assert seen_new_pod  # the rollout did start a pod of the new image
    assert op["status"] == "failed", op
    error = op["error"]
    assert error["step"] == "rollback" and error["code"] == "endpoint_update_failed", error
    assert "rolled back" in error["message"] and "ImagePullBackOff" in error["message"]
    assert f"{MISSING}: not found" in error["message"]  # kubelet's pull error
    assert "The previous version serves again" in error["message"]
    print("operation error:", error["message"])
    settle(served)
    # the very pod that served before the update still serves; the template is the old one
    assert images(served) == [(serving_uid, image, True)]
    assert deployment(served)["spec"]["template"] == template


async def test_the_service_proxy_needs_the_services_proxy_right(served: Stack) -> None:
    """kube-apiserver authorizes `services/proxy` like any subresource: an access entry with
    the view policy cannot POST through it (403, RBAC's wording); the edit policy can."""
    iam, eks = served.aws("iam"), served.aws("eks")
    (eks_name,) = eks.list_clusters()["clusters"]
    described = eks.describe_cluster(name=eks_name)["cluster"]
    path = "/api/v1/namespaces/default/services/served:8000/proxy/v1/completions"
    answers = {}
    for user, policy in (("proxy-viewer", "AmazonEKSViewPolicy"),
                         ("proxy-editor", "AmazonEKSEditPolicy")):
        arn = iam.create_user(UserName=user)["User"]["Arn"]
        key = iam.create_access_key(UserName=user)["AccessKey"]
        eks.create_access_entry(clusterName=eks_name, principalArn=arn)
        eks.associate_access_policy(clusterName=eks_name, principalArn=arn,
                                    policyArn=POLICY + policy,
                                    accessScope={"type": "namespace", "namespaces": ["default"]})
        with kube(described, key["AccessKeyId"], key["SecretAccessKey"]) as client:
            answers[user] = client.post(path, json={"model": "served", "prompt": "hi"})
            if user == "proxy-viewer":
                assert client.get("/api/v1/namespaces/default/services/served").status_code \
                    == 200  # it may read the Service, not call through it
                assert client.get(path.replace("v1/completions", "metrics")).status_code \
                    == 403  # GET is `get` on services/proxy: not in the view policy either
        answers[user + "-arn"] = arn
    refused = answers["proxy-viewer"]
    assert refused.status_code == 403, refused.text
    assert refused.json()["message"] == (
        f'services "served:8000" is forbidden: User "{answers["proxy-viewer-arn"]}" cannot '
        'create resource "services/proxy" in API group "" in the namespace "default"')
    assert answers["proxy-editor"].status_code == 200, answers["proxy-editor"].text
    assert answers["proxy-editor"].json()["object"] == "text_completion"


async def test_cleanup(served: Stack) -> None:
    async with served.client("admin") as admin:
        r = await admin.delete(URL, params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
    assert owned_objects(served) == []
