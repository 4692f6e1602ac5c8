"""The API server's `services/{name}/proxy` subresource in the sandbox, driven with plain HTTP
as any Kubernetes client would (Kubernetes docs, "Manually constructing apiserver proxy URLs"):
an unknown Service is 404, a Service without a Ready pod is 503 `no endpoints available`, a
pod that runs no engine refuses the connection (503), and a vLLM pod answers the OpenAI API
(vLLM docs, "OpenAI-Compatible Server") with its own `/metrics` counter."""

from __future__ import annotations

from typing import Any

import httpx

from tests.sandbox_kube.conftest import Sandbox

NS = "/api/v1/namespaces/default"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _deployment(name: str, image: str, args: list[str], replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    container = {"name": "engine", "image": image, "args": args,
                 "ports": [{"name": "http", "containerPort": 8000}],
                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [container]}}}}


def _service(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name},
                     "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}


def _scale(sandbox: Sandbox, http: httpx.Client, name: str, replicas: int) -> None:
    r = http.patch(f"{DEPLOYMENTS}/{name}", json={"spec": {"replicas": replicas}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    sandbox.advance(30, step=5)


def test_service_proxy_reaches_a_ready_engine_pod(sandbox: Sandbox, http: httpx.Client) -> None:
    proxy = f"{NS}/services/llm:http/proxy"
    r = http.get(f"{proxy}/v1/models")
    assert r.status_code == 404 and r.json()["reason"] == "NotFound", r.text

    args = ["--model", "s3://models/llama", "--served-model-name", "llm",
            "--max-model-len", "2048"]
    for obj, path in ((_deployment("llm", "docker.io/vllm/vllm-openai:v0.9.0", args, 0),
                       DEPLOYMENTS), (_service("llm"), f"{NS}/services")):
        assert http.post(path, json=obj).status_code == 201
    sandbox.advance(10, step=5)
    r = http.get(f"{proxy}/v1/models")
    assert r.status_code == 503, r.text
    assert r.json()["message"] == 'no endpoints available for service "llm"'

    _scale(sandbox, http, "llm", 1)
    models = http.get(f"{proxy}/v1/models").json()["data"]
    assert [(m["id"], m["root"], m["max_model_len"]) for m in models] == [
        ("llm", "s3://models/llama", 2048)]
    wrong = http.post(f"{proxy}/v1/completions", json={"model": "other", "prompt": "x"})
    assert wrong.status_code == 404 and wrong.json()["object"] == "error", wrong.text
    done = http.post(f"{proxy}/v1/chat/completions", json={
        "model": "llm", "max_tokens": 3,
        "messages": [{"role": "user", "content": "two words"}]}).json()
    assert done["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
    assert len(done["choices"][0]["message"]["content"].split()) == 3
    metrics = http.get(f"{NS}/services/llm:80/proxy/metrics").text
    assert 'vllm:request_success_total{model_name="llm"} 1.0' in metrics
    assert "# TYPE vllm:request_success_total counter" in metrics


def test_a_pod_without_an_engine_refuses_the_connection(sandbox: Sandbox,
                                                       http: httpx.Client) -> None:
    web = _deployment("web", "docker.io/library/nginx:1.27", [], 1)
    assert http.post(DEPLOYMENTS, json=web).status_code == 201
    assert http.post(f"{NS}/services", json=_service("web")).status_code == 201
    sandbox.advance(30, step=5)
    r = http.get(f"{NS}/services/web/proxy/v1/models")
    assert r.status_code == 503 and "connection refused" in r.json()["message"], r.text
