"""The LMI container's fake engine answers its own routes and schemas (djl-serving), not
vLLM's: `/ping`, `/invocations` with `inputs` or `messages`, `/v1/chat/completions`; 424 for a
body it cannot parse, 404 for `/v1/completions`; an LMI image is told apart from vLLM's."""

from __future__ import annotations

import json
from typing import Any

from podplane_sandbox.kube.fake_engine import FakeEngines, engine_of

POD = {"metadata": {"name": "ds-abc", "uid": "0123456789ab", "namespace": "default"}}
LMI = {"name": "inference", "image": "763104351884.dkr.ecr.us-west-2.amazonaws.com/"
       "djl-inference:0.33.0-lmi15.0.0-cu128",
       "env": [{"name": "OPTION_ROLLING_BATCH", "value": "vllm"}]}


def ask(engines: FakeEngines, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    status, _, text = engines.answer(POD, LMI, method, path,
                                     json.dumps(body).encode() if body is not None else b"")
    return status, json.loads(text) if text else None


def test_routes_and_schemas() -> None:
    engines = FakeEngines()
    assert engine_of(LMI) == "lmi"
    assert engine_of({"image": "docker.io/vllm/vllm-openai:v0.10.1"}) == "vllm"
    assert ask(engines, "GET", "ping")[0] == 200
    assert ask(engines, "GET", "health")[0] == 404
    assert ask(engines, "POST", "v1/completions", {"prompt": "hi", "max_tokens": 2})[0] == 404
    status, said = ask(engines, "POST", "invocations", {"prompt": "hi", "max_tokens": 2})
    assert (status, said["code"]) == (424, 424) and "inputs" in said["error"]
    status, said = ask(engines, "POST", "invocations", {
        "inputs": "What is a GPU?", "parameters": {"max_new_tokens": 5, "details": True}})
    assert status == 200 and len(said["generated_text"].split()) == 5
    assert said["details"]["generated_tokens"] == 5
    status, said = ask(engines, "POST", "invocations", {"inputs": "again"})
    assert status == 200 and "details" not in said
    assert len(said["generated_text"].split()) == 30   # max_new_tokens' default
    status, said = ask(engines, "POST", "v1/chat/completions", {
        "messages": [{"role": "user", "content": "hello there"}], "max_tokens": 3})
    assert status == 200 and said["object"] == "chat.completion"
    assert said["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
    assert engines.seen(POD).requests == 3
