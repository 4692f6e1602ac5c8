"""The fake engine of a Large Model Inference container (DJL Serving; the image JumpStart runs
for text models, `…/djl-inference:<version>-lmi…`), as fake_engine.py answers vLLM's.

Routes, from djl-serving's own sources and docs:
- serving/src/main/java/ai/djl/serving/http/InferenceRequestHandler.java: the inference
  handler takes `/ping`, `/invocations`, `/predictions/<model>` and `/v1/chat/completions`
  (the latter handled as `/invocations`); there is no `/v1/completions` and no `/health`:
  anything else is 404. `/ping` answers 200 with each model's worker status
  (ModelManager.workerStatus: `{<model>: {"status": "Healthy"}}`).
- serving/docker/config.properties: `inference_address=http://0.0.0.0:8080`.
- docs lmi/user_guides/lmi_input_output_schema.md (rolling batch, what
  `OPTION_ROLLING_BATCH=vllm` selects): a body `{"inputs": str, "parameters": {...}}`,
  `max_new_tokens` default 30, answered `{"generated_text": ...}` plus `details`
  {finish_reason, generated_tokens, inputs} when `parameters.details` is true; a payload that
  fails validation is `{"error": ..., "code": 424}` (engines/python djl_python/input_parser.py
  refuses a body without a non-empty string `inputs`, or with non-object `parameters`).
- docs lmi/user_guides/chat_input_output_schema.md: a body with `messages` is a chat
  completion, answered `{id, object: "chat.completion", created, choices[{index, message,
  logprobs, finish_reason}], usage}`; `max_tokens` optional.
The served model is the one the container loaded (/opt/ml/model); a body's `model` is not
checked. Text and token counts come from fake_engine (stand-in tokenizer).
"""

from __future__ import annotations

import json
from typing import Any

from podplane_sandbox.kube.fake_engine import FakeEngines, generate

Obj = dict[str, Any]
DEFAULT_NEW_TOKENS = 30
MODEL = "model"   # DJL's name for the model it loads at start-up (sources are silent)


def answer(engines: FakeEngines, pod: Obj, method: str, path: str,
           body: bytes) -> tuple[int, str, str]:
    """(status, content type, text) of one HTTP request to the LMI container."""
    path = "/" + path.strip("/")
    if method == "GET" and path == "/ping":
        return 200, "application/json", json.dumps({MODEL: {"status": "Healthy"}})
    if method == "POST" and path in ("/invocations", "/v1/chat/completions"):
        return _invoke(engines, pod, body)
    return 404, "application/json", json.dumps(
        {"code": 404, "type": "ResourceNotFoundException", "message": f"No route {path}."})


def _invalid(why: str) -> tuple[int, str, str]:
    return 424, "application/json", json.dumps({"error": why, "code": 424})


def _invoke(engines: FakeEngines, pod: Obj, body: bytes) -> tuple[int, str, str]:
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return _invalid("Invalid request payload: not JSON.")
    if not isinstance(request, dict):
        return _invalid("Invalid request payload. Request payload should be a json object.")
    if "messages" in request:
        return _chat(engines, pod, request)
    inputs, parameters = request.get("inputs"), request.get("parameters", {})
    if not isinstance(inputs, str) or not inputs:
        return _invalid("Invalid request payload. Request payload should be a json object "
                        "specifying the 'inputs' field as a non-empty string.")
    if not isinstance(parameters, dict):
        return _invalid("Invalid request payload. 'parameters' must be an object.")
    wanted = int(parameters.get("max_new_tokens") or DEFAULT_NEW_TOKENS)
    text = _count(engines, pod, inputs, wanted)
    out: Obj = {"generated_text": text}
    if parameters.get("details"):
        out["details"] = {"finish_reason": "length", "generated_tokens": wanted,
                          "inputs": inputs}
    return 200, "application/json", json.dumps(out)


def _chat(engines: FakeEngines, pod: Obj, request: Obj) -> tuple[int, str, str]:
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return _invalid("Invalid request payload: 'messages' must be a non-empty list.")
    prompt = " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    wanted = int(request.get("max_tokens") or DEFAULT_NEW_TOKENS)
    text = _count(engines, pod, prompt, wanted)
    used = len(prompt.split())
    return 200, "application/json", json.dumps({
        "id": f"chatcmpl-{engines.seen(pod).requests - 1}", "object": "chat.completion",
        "created": engines.created,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "logprobs": None, "finish_reason": "length"}],
        "usage": {"prompt_tokens": used, "completion_tokens": wanted,
                  "total_tokens": used + wanted}})


def _count(engines: FakeEngines, pod: Obj, prompt: str, wanted: int) -> str:
    seen = engines.seen(pod)
    seen.requests += 1
    seen.prompt_tokens += len(prompt.split())
    seen.generation_tokens += wanted
    return generate(prompt, pod["metadata"]["name"], wanted)
