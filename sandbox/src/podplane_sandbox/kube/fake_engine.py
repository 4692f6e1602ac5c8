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
connection when its engine stops first (pod_termination.py: preStop, SIGTERM as each engine
handles it, the grace period).

Load: a test sets how many requests are in flight on a Service (`set_load`, the sandbox's
control); they are spread over the Service's ready pods in turn, as the proxy spreads
requests. Each engine runs at most its batch size at once and queues the rest: vLLM
`--max-num-seqs` (docs "Engine Arguments"), SGLang `--max-running-requests` ("Server
Arguments"); unset, the sandbox assumes 256. The gauges: vLLM `vllm:num_requests_running`,
`vllm:num_requests_waiting`; SGLang `sglang:num_running_reqs`, `sglang:num_queue_reqs`.

The text is deterministic (words picked by a hash of the prompt and the pod), and tokens are
counted by whitespace: a stand-in tokenizer, stated as such.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
VOCABULARY = ("the", "model", "answers", "from", "a", "sandbox", "pod", "with", "tokens",
              "quickly", "and", "deterministically")
DEFAULT_MAX_TOKENS = 16
DEFAULT_MAX_MODEL_LEN = 4096
DEFAULT_BATCH = 256
LMI_IMAGES = ("djl-inference", "djl-serving")   # AWS's LMI images; DJL's own


def engine_of(container: Obj) -> str | None:
    """vllm or sglang when the container runs one (image or command), lmi for a Large Model
    Inference (DJL Serving) image, whatever its backend (fake_lmi.py), else None."""
    if str(container.get("image", "")).rsplit("/", 1)[-1].startswith(LMI_IMAGES):
        return "lmi"
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
    store: Any = None
    load: dict[tuple[str, str], int] = field(default_factory=dict)

    def set_load(self, namespace: str, service: str, in_flight: int) -> None:
        """The requests in flight on a Service (the test's knob)."""
        self.load[(namespace, service)] = max(0, int(in_flight))

    def in_flight(self, pod: Obj) -> int:
        """This pod's share of every loaded Service that routes to it."""
        from podplane_sandbox.kube.service_proxy import ready_endpoints  # noqa: PLC0415

        ns, total = pod["metadata"].get("namespace", "default"), 0
        for (svc_ns, name), n in self.load.items():
            svc = self.store.find("services", svc_ns, name) if self.store else None
            if svc_ns != ns or svc is None or not n:
                continue
            names = [p["metadata"]["name"] for p in ready_endpoints(self.store, ns, svc)]
            if pod["metadata"]["name"] in names:
                i = names.index(pod["metadata"]["name"])
                total += n // len(names) + (1 if i < n % len(names) else 0)
        return total

    def answer(self, pod: Obj, container: Obj, method: str, path: str,
               body: bytes) -> tuple[int, str, str]:
        """(status, content type, text) of one HTTP request to the engine."""
        engine = engine_of(container) or "vllm"
        if engine == "lmi":   # its own routes and schema
            from podplane_sandbox.kube.fake_lmi import answer as lmi  # noqa: PLC0415 (a cycle)
            return lmi(self, pod, method, path, body)
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
            batch = int(_arg(args, "--max-num-seqs", "--max-running-requests") or DEFAULT_BATCH)
            busy = self.in_flight(pod) + seen.running   # the test's load + real requests
            gauges = (min(busy, batch), max(0, busy - batch))
            return 200, "text/plain; version=0.0.4", metrics(engine, served, seen, gauges)
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


_ENGINES: weakref.WeakKeyDictionary[Any, FakeEngines] = weakref.WeakKeyDictionary()


def engines_of(store: Any) -> FakeEngines:
    """The fake engines of one API server (the proxy and KEDA's scaler read the same)."""
    if store not in _ENGINES:
        _ENGINES[store] = FakeEngines(store=store)
    return _ENGINES[store]


GAUGES = {"vllm": (("vllm:num_requests_running", "Number of requests in model execution "
                    "batches."), ("vllm:num_requests_waiting", "Number of requests waiting to "
                                  "be processed.")),
          "sglang": (("sglang:num_running_reqs", "The number of running requests."),
                     ("sglang:num_queue_reqs", "The number of requests in the waiting "
                      "queue."))}


def metrics(engine: str, model: str, seen: Counters,
            gauges: tuple[int, int] = (0, 0)) -> str:
    escaped = model.replace('"', '\\"')
    label = f'{{model_name="{escaped}"}}'
    lines: list[str] = []
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
    for (name, help_text), value in zip(GAUGES["sglang" if engine == "sglang" else "vllm"],
                                        gauges, strict=True):
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge",
                  f"{name}{label} {float(value)}"]
    return "\n".join(lines) + "\n"
