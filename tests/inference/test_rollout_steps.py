"""The update's last steps alone, against a small in-memory API server: a smoke request the
engine answers with an error rolls the Deployment back to the stored previous template and
fails saying what the engine answered; a passing update applies nothing more."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podplane.domain.errors import CloudError
from podplane.domain.inference.render import as_it_was, render
from podplane.services.inference.rollout import RolloutSteps
from tests.fakes.step import FakeStep

OLD = {"name": "llm", "instance_group": "workers", "model": "Qwen/Qwen2.5-0.5B-Instruct",
       "engine": "vllm", "image": "docker.io/vllm/vllm-openai:v0.9.0", "tensor_parallel": 1,
       "max_model_len": None, "dtype": "auto", "replicas": 1, "exposure": "service"}
NEW = {**OLD, "model": "Qwen/Qwen2.5-1.5B-Instruct"}


class OnePodServer:
    """Runs one Ready pod of whatever Deployment was applied last; the engine answers
    `answer` to every proxied request."""

    def __init__(self, applied: dict[str, Any], answer: tuple[int, Any]) -> None:
        self.applied, self.answer = [applied], answer
        self.proxied: list[tuple[str, str, Any]] = []

    async def apply(self, manifest: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.applied.append(manifest)
        return manifest

    async def list(self, api_version: str, kind: str, **_: Any) -> list[dict[str, Any]]:
        if kind == "Event":
            return []
        template = self.applied[-1]["spec"]["template"]
        return [{"metadata": {"name": "llm-1", "uid": str(len(self.applied))},
                 "spec": template["spec"],
                 "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]

    async def proxy(self, method: str, namespace: str, service: str, port: int, path: str,
                    body: Any = None) -> tuple[int, Any]:
        self.proxied.append((method, f"{service}:{port}/{path}", body))
        return self.answer


def _run(server: OnePodServer, results: dict[str, Any] | None = None) -> FakeStep:
    previous = as_it_was(render(OLD)[0])
    ctx = FakeStep({"endpoint": "llm", "replicas": 1, "request": NEW, "previous": previous})
    ctx.results.update(results or {})
    return ctx


def test_a_failed_smoke_request_rolls_back_and_says_what_the_engine_answered() -> None:
    server = OnePodServer(render(NEW)[0], (500, {"object": "error", "message": "CUDA OOM"}))

    async def kube(_ctx: Any) -> OnePodServer:
        return server

    steps = RolloutSteps(kube)

    async def scenario() -> None:
        ctx = _run(server)
        ctx.results.update(await steps.rollout(ctx))
        assert ctx.results["rollout"] == {"ok": True}
        ctx.results.update(await steps.smoke(ctx))
        assert ctx.results["smoke"]["ok"] is False and ctx.results["smoke"]["status"] == 500
        with pytest.raises(CloudError) as failed:
            await steps.rollback(ctx)
        assert failed.value.code == "endpoint_update_failed"
        assert "the smoke request answered 500" in failed.value.message
        assert "CUDA OOM" in failed.value.message
        assert "The previous version serves again" in failed.value.message
        assert ctx.phases == ["following", "asking", "rolling_back"]

    asyncio.run(scenario())
    assert server.proxied == [("POST", "llm:8000/v1/completions", {
        "model": "llm", "prompt": "podplane smoke test: say something", "max_tokens": 8})]
    rolled_back = server.applied[-1]
    assert rolled_back["spec"]["template"] == render(OLD)[0]["spec"]["template"]
    assert rolled_back["spec"]["replicas"] == 1


def test_a_passing_update_applies_nothing_more() -> None:
    server = OnePodServer(render(NEW)[0], (200, {"choices": [{"text": "a model answers"}]}))

    async def kube(_ctx: Any) -> OnePodServer:
        return server

    steps = RolloutSteps(kube)

    async def scenario() -> dict[str, Any]:
        ctx = _run(server)
        ctx.results.update(await steps.rollout(ctx))
        ctx.results.update(await steps.smoke(ctx))
        return await steps.rollback(ctx)

    assert asyncio.run(scenario()) == {"rolled_back": False}
    assert len(server.applied) == 1
