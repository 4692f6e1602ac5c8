"""A fake OpenAI-compatible inference engine behind pods that run vLLM or SGLang.

No model runs in the sandbox: each such pod answers like the engine's HTTP server would, from
the arguments in its pod spec. Sources: vLLM docs "OpenAI-Compatible Server" (`/v1/models`,
`/v1/completions`, `/v1/chat/completions`, the `usage` object, an unknown model answered 404
with an error object) and "Production Metrics" (`vllm:request_success_total`,
`vllm:prompt_tokens_total`, `vllm:generation_tokens_total`, label `model_name`); SGLang docs
"Production Metrics" (`sglang:num_requests_total`, `sglang:prompt_tokens_total`,
`sglang:generation_tokens_total`; `/metrics` only with `--enable-metrics`); Prometheus
"Exposition formats" (text format 0.0.4). Requests in flight: the gauges
`vllm:num_requests_running` (vLLM "Production Metrics": requests in model execution batches)
and `sglang:num_running_reqs` (SGLang "Production Metrics").

A request is answered at once unless `busy_seconds` is set (tests set it): then each completion
stays in flight that many virtual seconds, counted by the running gauge, and fails as a reset
connection when its pod is deleted meanwhile (stricter than an engine that finishes its
requests within the grace period: a plan that deletes a serving pod shows here).

The text is deterministic (words picked by a hash of the prompt and the pod), and tokens are
counted by whitespace: a stand-in tokenizer, stated as such.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
VOCABULARY = ("the", "model", "answers", "from", "a", "sandbox", "pod", "with", "tokens",
              "quickly", "and", "deterministically")
DEFAULT_MAX_TOKENS = 16
DEFAULT_MAX_MODEL_LEN = 4096


def engine_of(container: Obj) -> str | None:
    """vllm or sglang when the container runs one (image or command), else None."""
    words = " ".join([str(container.get("image", "")), *map(str, container.get("command") or []),
                      *map(str, container.get("args") or [])])
    if "vllm" in words:
        return "vllm"
    if "sglang" in words:
        return "sglang"
    return None


def _arg(args: list[str], *flags: str) -> str | None:
    for i, a in enumerate(args[:-1]):
        if a in flags:
            return args[i + 1]
    return None


@dataclass
class Counters:
    requests: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    running: int = 0
    last_answered: float | None = None  # virtual time of the last completion answered


@dataclass
class FakeEngines:
    """Every fake engine of one API server, by pod uid (counters live as long as the pod)."""

    counters: dict[str, Counters] = field(default_factory=dict)
    created: int = 1_700_000_000
    busy_seconds: float = 0.0

    def seen(self, pod: Obj) -> Counters:
        return self.counters.setdefault(pod["metadata"]["uid"], Counters())

    def answer(self, pod: Obj, container: Obj, method: str, path: str,
               body: bytes) -> tuple[int, str, str]:
        """(status, content type, text) of one HTTP request to the engine."""
        engine = engine_of(container) or "vllm"
        args = [str(a) for a in container.get("args") or []]
        model = _arg(args, "--model", "--model-path") or "model"
        served = _arg(args, "--served-model-name") or model
        seen = self.seen(pod)
        path = "/" + path.lstrip("/")
        if method == "GET" and path == "/health":
            return 200, "text/plain", ""
        if method == "GET" and path == "/metrics":
            if engine == "sglang" and "--enable-metrics" not in args:
                return 404, "application/json", json.dumps({"detail": "Not Found"})
            return 200, "text/plain; version=0.0.4", metrics(engine, served, seen)
        if method == "GET" and path == "/v1/models":
            length = int(_arg(args, "--max-model-len", "--context-length")
                         or DEFAULT_MAX_MODEL_LEN)
            return 200, "application/json", json.dumps({"object": "list", "data": [{
                "id": served, "object": "model", "created": self.created,
                "owned_by": engine, "root": model, "max_model_len": length}]})
        if method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            return self._complete(pod, served, seen, path, body)
        return 404, "application/json", json.dumps({"detail": "Not Found"})

    def _complete(self, pod: Obj, served: str, seen: Counters, path: str,
                  body: bytes) -> tuple[int, str, str]:
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return _error(400, "BadRequestError", "The request body is not JSON.")
        if not isinstance(request, dict):
            return _error(400, "BadRequestError", "The request body is not an object.")
        if request.get("model") != served:
            return _error(404, "NotFoundError",
                          f"The model `{request.get('model')}` does not exist.")
        chat = path.endswith("chat/completions")
        prompt = (" ".join(str(m.get("content", "")) for m in request.get("messages") or []
                           if isinstance(m, dict)) if chat else str(request.get("prompt", "")))
        wanted = int(request.get("max_tokens") or DEFAULT_MAX_TOKENS)
        text = generate(prompt, pod["metadata"]["name"], wanted)
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": wanted,
                 "total_tokens": len(prompt.split()) + wanted}
        seen.requests += 1
        seen.prompt_tokens += usage["prompt_tokens"]
        seen.generation_tokens += wanted
        n = seen.requests
        if chat:
            choice: Obj = {"index": 0, "message": {"role": "assistant", "content": text},
                           "finish_reason": "length"}
            out = {"id": f"chatcmpl-{pod['metadata']['uid'][:8]}-{n}",
                   "object": "chat.completion"}
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "length"}
            out = {"id": f"cmpl-{pod['metadata']['uid'][:8]}-{n}", "object": "text_completion"}
        out.update({"created": self.created, "model": served, "choices": [choice],
                    "usage": usage})
        return 200, "application/json", json.dumps(out)


def generate(prompt: str, pod: str, tokens: int) -> str:
    digest = hashlib.sha256(f"{pod}\n{prompt}".encode()).digest()
    return " ".join(VOCABULARY[digest[i % len(digest)] % len(VOCABULARY)]
                    for i in range(tokens))


def _error(status: int, kind: str, message: str) -> tuple[int, str, str]:
    return status, "application/json", json.dumps(
        {"object": "error", "message": message, "type": kind, "param": None, "code": status})


def metrics(engine: str, model: str, seen: Counters) -> str:
    escaped = model.replace('"', '\\"')
    label = f'{{model_name="{escaped}"}}'
    running = ("sglang:num_running_reqs" if engine == "sglang" else "vllm:num_requests_running")
    lines = [f"# HELP {running} Number of requests running.", f"# TYPE {running} gauge",
             f"{running}{label} {float(seen.running)}"]
    if engine == "sglang":
        rows = [("sglang:num_requests_total", "Number of requests processed.", seen.requests),
                ("sglang:prompt_tokens_total", "Number of prefill tokens processed.",
                 seen.prompt_tokens),
                ("sglang:generation_tokens_total", "Number of generation tokens processed.",
                 seen.generation_tokens)]
    else:
        rows = [("vllm:request_success_total", "Count of successfully processed requests.",
                 seen.requests),
                ("vllm:prompt_tokens_total", "Number of prefill tokens processed.",
                 seen.prompt_tokens),
                ("vllm:generation_tokens_total", "Number of generation tokens processed.",
                 seen.generation_tokens)]
    for name, help_text, value in rows:
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} counter",
                  f"{name}{label} {float(value)}"]
    return "\n".join(lines) + "\n"
