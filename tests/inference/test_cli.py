"""`podplane endpoint …` sends one REST call per command, with the flags where the API reads
them (path, body, query), and prints what the server answered."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from podplane.cli import app
from podplane.cli import remote as remote_module

LISTED = [{"name": "qwen", "engine": "vllm", "model": "Qwen/Qwen2.5-0.5B-Instruct",
           "tensor_parallel": 1, "replicas": 2, "ready_replicas": 1, "status": "Progressing",
           "exposure": "service"},
          {"name": "pooled", "engine": "vllm", "model": "Qwen/Qwen2.5-0.5B-Instruct",
           "tensor_parallel": 1, "replicas": 1, "ready_replicas": 1, "status": "Ready",
           "exposure": "service", "pool": "warm"}]
INVOKED = {"endpoint": "qwen", "path": "/v1/completions", "status": 200, "ready_replicas": 1,
           "response": {"choices": [{"text": "the model answers"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 3}}}
PLAN = {"changed": True, "dry_run": True, "plan": {"endpoint": "qwen", "gpus_requested": 2}}


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any] | None]]:
    seen: list[tuple[str, str, dict[str, Any] | None]] = []
    answers = {"GET": LISTED, "POST": PLAN}

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        seen.append((request.method, request.url.raw_path.decode(), body))
        if request.url.path.endswith("/invoke"):
            return httpx.Response(200, json=INVOKED)
        return httpx.Response(200, json=answers.get(request.method, PLAN))

    real_client = httpx.Client

    def client(**kw: object) -> httpx.Client:
        return real_client(transport=httpx.MockTransport(answer), **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(remote_module.httpx, "Client", client)
    return seen


def run(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--token", "pp_x"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_each_command_is_one_rest_call(sent: list[tuple[str, str, Any]]) -> None:
    out = run("endpoint", "create", "alpha", "qwen", "--group", "workers", "--model",
              "Qwen/Qwen2.5-0.5B-Instruct", "--tp", "2", "--exposure", "load_balancer",
              "--dry-run")
    assert '"gpus_requested": 2' in out
    listed = run("endpoint", "list", "alpha")
    assert "qwen" in listed and "1/2" in listed
    assert "pool warm" in listed  # an endpoint on a warm pool says so
    assert "the model answers" in run("endpoint", "invoke", "alpha", "qwen", "hi",
                                      "--max-tokens", "3")
    run("endpoint", "scale", "alpha", "qwen", "3", "--dry-run")
    run("endpoint", "delete", "alpha", "qwen", "--yes", "--dry-run")
    run("endpoint", "update", "alpha", "qwen", "--image", "docker.io/vllm/vllm-openai:latest",
        "--pp", "2", "--dry-run")
    base = "/api/v1/clusters/alpha/endpoints"
    assert sent[0] == ("POST", base, {
        "name": "qwen", "instance_group": "workers", "model": "Qwen/Qwen2.5-0.5B-Instruct",
        "engine": "vllm", "tensor_parallel": 2, "dtype": "auto", "replicas": 1,
        "exposure": "load_balancer", "kind": "self_managed", "dry_run": True})
    assert sent[1][:2] == ("GET", base)
    assert sent[2] == ("POST", f"{base}/qwen/invoke",
                       {"prompt": "hi", "max_tokens": 3, "chat": False})
    assert sent[3] == ("PATCH", f"{base}/qwen", {"replicas": 3, "dry_run": True})
    assert sent[4][:2] == ("DELETE", f"{base}/qwen?confirm=true&dry_run=true")
    assert sent[5] == ("PATCH", f"{base}/qwen", {  # only the fields named are sent
        "image": "docker.io/vllm/vllm-openai:latest", "pipeline_parallel": 2, "dry_run": True})
    assert len(sent) == 6


def test_autoscale_flag_sends_the_object(sent: list[tuple[str, str, Any]]) -> None:
    run("endpoint", "create", "alpha", "qwen", "--group", "workers", "--model", "m",
        "--autoscale", "1:4:waiting:2.5:120", "--dry-run")
    run("endpoint", "update", "alpha", "qwen", "--autoscale", "1:2", "--dry-run")
    run("endpoint", "update", "alpha", "qwen", "--autoscale", "off")
    assert sent[0][2]["autoscaling"] == {"min_replicas": "1", "max_replicas": "4",
                                         "metric": "waiting", "target": "2.5",
                                         "cooldown_seconds": "120"}
    assert sent[1][2] == {"autoscaling": {"min_replicas": "1", "max_replicas": "2"},
                          "dry_run": True}
    assert sent[2][2] == {"autoscaling": "off", "dry_run": False}
    bad = CliRunner().invoke(app, ["endpoint", "update", "alpha", "qwen", "--autoscale", "3",
                                   "--token", "pp_x"])
    assert bad.exit_code != 0 and len(sent) == 3


def test_jumpstart_licence_flag_and_an_lmi_answer(sent: list[tuple[str, str, Any]],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run("endpoint", "create", "alpha", "llama", "--group", "workers", "--kind", "managed",
        "--model", "jumpstart:meta-textgeneration-llama-3-1-8b-instruct", "--accept-eula",
        "--dry-run")
    run("endpoint", "create", "alpha", "ds", "--group", "workers", "--kind", "managed",
        "--model", "jumpstart:deepseek-llm-r1-distill-qwen-1-5b", "--dry-run")
    assert sent[0][2]["accept_eula"] is True
    assert "accept_eula" not in sent[1][2]   # left out: the API's default (false)
    lmi = {**INVOKED, "path": "/invocations", "response": {
        "generated_text": "an lmi answer", "details": {"generated_tokens": 3}}}
    monkeypatch.setitem(INVOKED, "path", lmi["path"])
    monkeypatch.setitem(INVOKED, "response", lmi["response"])
    out = run("endpoint", "invoke", "alpha", "llama", "hi", "--max-tokens", "3")
    assert "an lmi answer" in out and "3 completion tokens" in out, out
