"""An SGLang endpoint with the SGLang router in front (cache_aware), on a podplane-created
cluster of two one-GPU nodes. What is asserted is what Kubernetes and the pods show: the
objects kubectl lists, which worker pod answered (the engine puts its pod's uid in each answer's
id), and the router's own Prometheus counters read through the API server's service proxy."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from podplane.api.routers.endpoints import EndpointOut
from tests.groups.conftest import finish
from tests.inference.conftest import CLUSTER, ENDPOINTS, endpoint_pods, kubectl_json, ready, settle
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
SYSTEM_A = "You are a careful assistant for the billing team. Answer with the invoice rules. " * 3
SYSTEM_B = "Translate the following support ticket from German to English, word by word. " * 3
RBAC = ("serviceaccounts", "roles.rbac.authorization.k8s.io",
        "rolebindings.rbac.authorization.k8s.io")


def names(stack: Stack, resource: str) -> list[str]:
    found = kubectl_json(stack, "get", resource, "-n", "default")["items"]
    return sorted(o["metadata"]["name"] for o in found)


def worker_of(answer: dict[str, Any], pods: list[dict[str, Any]]) -> str:
    """The worker pod that produced an answer: its id is `cmpl-<pod uid[:8]>-<n>`."""
    prefix = answer["id"].split("-")[1]
    return next(p["metadata"]["name"] for p in pods if p["metadata"]["uid"].startswith(prefix))


async def ask(api: Any, prompt: str) -> dict[str, Any]:
    r = await api.post(f"{ENDPOINTS}/chat/invoke", json={"prompt": prompt, "max_tokens": 4})
    assert r.status_code == 200, r.text
    return dict(r.json()["response"])


def router_metrics(stack: Stack) -> str:
    return stack.kubectl("get", "--raw", "/api/v1/namespaces/default/services/"
                         "chat:29000/proxy/metrics")


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{name} ([0-9.]+)$", text, re.M)
    assert found, (name, text)
    return float(found.group(1))


async def test_refusals_change_nothing(cluster: tuple[Stack, str], tmp_path: Path) -> None:
    stack, group = cluster
    base = {"name": "taken", "instance_group": group, "model": MODEL, "engine": "sglang",
            "router": "cache_aware"}
    foreign = tmp_path / "role.json"  # someone else's Role with a router's name
    foreign.write_text(json.dumps({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "taken-router", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}))
    stack.kubectl("apply", "-f", str(foreign))
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={**base, "engine": "vllm"})
        assert r.status_code == 422 and r.json()["field"] == "router", r.text
        r = await api.post(ENDPOINTS, json={**base, "router": "least_loaded"})
        assert r.status_code == 422, r.text
        r = await api.post(ENDPOINTS, json=base)
        assert r.status_code == 409 and r.json()["code"] == "endpoint_exists", r.text
        assert "Role named 'taken-router'" in r.json()["detail"]
    settle(stack)
    assert names(stack, "deployments") == [] and not any(
        n.startswith("taken") for n in names(stack, "serviceaccounts"))
    role = kubectl_json(stack, "get", "role", "taken-router", "-n", "default")
    assert role["rules"][0]["resources"] == ["configmaps"]  # untouched
    stack.kubectl("delete", "role", "taken-router", "-n", "default")


async def test_cache_aware_routing_follows_prefixes_and_scaling(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    stack.kubectl("create", "serviceaccount", "keep-me", "-n", "default")  # not podplane's
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={"name": "chat", "instance_group": group,
                                            "model": MODEL, "engine": "sglang",
                                            "router": "cache_aware"})
        assert r.status_code == 202, r.text
        kinds = [m["kind"] for m in r.json()["plan"]["manifests"]]
        assert kinds == ["Deployment", "Service", "ServiceAccount", "Role", "RoleBinding",
                         "Deployment"]
        assert (await finish(api, r.json()))["status"] == "succeeded"

        svc = kubectl_json(stack, "get", "service", "chat", "-n", "default")
        assert svc["spec"]["selector"] == {"podplane.io/router-of": "chat"}
        router = kubectl_json(stack, "get", "deployment", "chat-router", "-n", "default")
        spec = router["spec"]["template"]["spec"]
        assert spec["serviceAccountName"] == "chat-router"
        assert "podplane.io/endpoint" not in router["spec"]["template"]["metadata"]["labels"]
        args = spec["containers"][0]["args"]
        assert args[args.index("--selector") + 1] == "podplane.io/endpoint=chat"
        binding = kubectl_json(stack, "get", "rolebinding", "chat-router", "-n", "default")
        assert binding["subjects"][0] == {"kind": "ServiceAccount", "name": "chat-router",
                                          "namespace": "default"}
        got = EndpointOut.model_validate((await api.get(f"{ENDPOINTS}/chat")).json())
        assert got.router == "cache_aware" and len(got.router_pods) == 1
        assert got.router_pods[0].ready and got.router_pods[0].name.startswith("chat-router-")
        diagnosed = await api.get(f"/api/v1/clusters/{CLUSTER}/diagnostics/endpoints/chat")
        assert diagnosed.status_code == 200, diagnosed.text  # seen failing once under load
        verdict = diagnosed.json()  # the Service's Ready target is the router pod: healthy
        assert verdict["findings"] == [], verdict

        first = [await ask(api, SYSTEM_A + f"Question {i}?") for i in range(3)]
        pods = endpoint_pods(stack, "chat")
        assert {worker_of(a, pods) for a in first} == {pods[0]["metadata"]["name"]}

        r = await api.patch(f"{ENDPOINTS}/chat", json={"replicas": 2})
        assert (await finish(api, r.json()))["status"] == "succeeded"
        pods = endpoint_pods(stack, "chat")
        assert len(pods) == 2 and all(ready(p) for p in pods)
        a_pod = worker_of(first[0], pods)
        b = [await ask(api, SYSTEM_B + f"Ticket {i}") for i in range(3)]
        a = [await ask(api, SYSTEM_A + f"Another question {i}?") for i in range(3)]
        assert {worker_of(x, pods) for x in a} == {a_pod}       # same long prefix, same pod
        b_pods = {worker_of(x, pods) for x in b}
        assert len(b_pods) == 1 and b_pods != {a_pod}         # the added worker is used
        text = router_metrics(stack)
        assert metric(text, "sgl_router_active_workers") == 2.0
        assert metric(text, "sgl_router_cache_hits_total") >= 4  # 2 A + 2 B + 2 A-again
        assert 'sgl_router_requests_total{route="/v1/completions"} 9.0' in text

        r = await api.patch(f"{ENDPOINTS}/chat", json={"replicas": 1})
        assert (await finish(api, r.json()))["status"] == "succeeded"
        left = endpoint_pods(stack, "chat")
        after = [await ask(api, p + " once more") for p in (SYSTEM_A, SYSTEM_B) * 3]
        assert {worker_of(x, left) for x in after} == {left[0]["metadata"]["name"]}
        assert metric(router_metrics(stack), "sgl_router_active_workers") == 1.0
    await logs_are_the_engines_and_the_routers(stack, left[0]["metadata"]["name"])

    async with stack.client("admin") as admin:
        r = await admin.delete(f"{ENDPOINTS}/chat", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
    settle(stack)
    assert names(stack, "deployments") == [] and names(stack, "services") in (
        [], ["kubernetes"])
    assert [n for n in names(stack, RBAC[0]) if n != "default"] == ["keep-me"]
    assert names(stack, RBAC[1]) == [] and names(stack, RBAC[2]) == []
    assert kubectl_json(stack, "get", "pods", "-n", "default")["items"] == []
    stack.kubectl("delete", "serviceaccount", "keep-me", "-n", "default")


async def logs_are_the_engines_and_the_routers(stack: Stack, engine_pod: str) -> None:
    """endpoint logs (a viewer may read them): the engine pod and the router pod, each the
    lines `kubectl logs` prints, paged; a pod that is not the endpoint's is a 404."""
    (router,) = kubectl_json(stack, "get", "pods", "-n", "default", "-l",
                             "podplane.io/router-of=chat")["items"]
    router_pod = router["metadata"]["name"]
    async with stack.client("viewer") as api:
        page = (await api.get(f"{ENDPOINTS}/chat/logs", params={"tail": 5})).json()
        assert page["endpoint"] == "chat" and page["pods"] == sorted([engine_pod, router_pod])
        for pod in page["pods"]:
            said = [x["line"] for x in page["lines"] if x["pod"] == pod]
            assert said and said == stack.kubectl("logs", pod, "--tail", "5").splitlines()
        first = (await api.get(f"{ENDPOINTS}/chat/logs",
                               params={"tail": 5, "limit": 1, "pod": router_pod})).json()
        assert first["pods"] == [router_pod] and len(first["lines"]) == 1
        assert first["next_cursor"] == 1
        other = await api.get(f"{ENDPOINTS}/chat/logs", params={"pod": "not-chat-0"})
        assert other.status_code == 404 and router_pod in other.json()["hint"]


async def test_router_without_rbac_discovers_no_worker(cluster: tuple[Stack, str]) -> None:
    """The sandbox holds the router to its RBAC: with the RoleBinding gone it cannot watch
    pods, so it knows no worker and answers 503 (podplane: endpoint error, no traceback)."""
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={"name": "chat", "instance_group": group,
                                            "model": MODEL, "engine": "sglang",
                                            "router": "round_robin"})
        assert (await finish(api, r.json()))["status"] == "succeeded"
        assert (await api.post(f"{ENDPOINTS}/chat/invoke", json={"prompt": "hi"})
                ).status_code == 200
        stack.kubectl("delete", "rolebinding", "chat-router", "-n", "default")
        r = await api.post(f"{ENDPOINTS}/chat/invoke", json={"prompt": "hi"})
        assert r.status_code in (502, 503) and "traceback" not in r.text.lower(), r.text
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{ENDPOINTS}/chat", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
    settle(stack)
    assert [n for n in names(stack, RBAC[0]) if n != "default"] == []
    assert names(stack, RBAC[1]) == []
