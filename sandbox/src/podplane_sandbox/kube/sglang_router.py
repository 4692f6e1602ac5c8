"""A fake SGLang router (`python3 -m sglang_router.launch_router`) behind a pod, in front of the
sandbox's fake SGLang engines. No router binary runs: the pod answers as the router would,
from the arguments in its pod spec.

Sources, sgl-project/sglang `sgl-router`:
- `py_src/sglang_router/router_args.py`: flags and defaults (`--policy` cache_aware,
  `--cache-threshold` 0.3, `--balance-abs-threshold` 64, `--balance-rel-threshold` 1.5,
  `--selector k=v ...`, `--service-discovery-namespace`, `--service-discovery-port` 80,
  `--prometheus-port` 29000).
- `src/service_discovery.rs`: the router watches pods whose labels equal every `--selector`
  pair; a pod joins (`http://<podIP>:<port>`) when its phase is Running and its Ready condition
  True, and leaves when it carries a deletionTimestamp; nothing else removes it. The watch needs
  RBAC get/list/watch on pods (README, "Service Discovery"): without them the watcher fails and
  the router never learns a worker. Here the watch is read from the store at each request.
- `src/policies/cache_aware.rs` and `tree.rs`: imbalanced when `max_load - min_load >
  abs_threshold` and `max_load > min_load * rel_threshold` -> the least loaded worker; else
  the longest prefix match (in characters) over every worker's approximate tree: a match rate
  above the threshold picks that worker, otherwise the worker whose tree holds the fewest
  characters; the request's text is then inserted in the chosen worker's tree. Upstream breaks
  ties by map order; the sandbox breaks them by worker URL so tests can count.
- `src/policies/round_robin.rs`, `random.rs`, `power_of_two.rs` (random: seeded here).
- `src/metrics.rs`: `sgl_router_requests_total{route}`,
  `sgl_router_processed_requests_total{worker}`, `sgl_router_active_workers`,
  `sgl_router_running_requests{worker}`, `sgl_router_cache_hits_total`,
  `sgl_router_cache_misses_total`, `sgl_router_load_balancing_events_total`,
  `sgl_router_tree_size{worker}` on the Prometheus port; `/liveness`, `/readiness`, `/health`
  on the API port (README, "Public health endpoints"; readiness needs a healthy worker).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from podplane_sandbox.kube import authz
from podplane_sandbox.kube.fake_engine import FakeEngines
from podplane_sandbox.kube.selectors import match_label_selector
from podplane_sandbox.kube.store import Store

Obj = dict[str, Any]
ENTRY = "sglang_router.launch_router"
ROUTES = ("/v1/completions", "/v1/chat/completions")
DEFAULTS = {"--policy": "cache_aware", "--cache-threshold": "0.3",
            "--balance-abs-threshold": "64", "--balance-rel-threshold": "1.5",
            "--service-discovery-port": "80", "--port": "30000", "--prometheus-port": "29000"}


def is_router(container: Obj) -> bool:
    words = [*map(str, container.get("command") or []), *map(str, container.get("args") or [])]
    return ENTRY in words


def _flag(args: list[str], name: str) -> str:
    for i, a in enumerate(args[:-1]):
        if a == name:
            return args[i + 1]
    return DEFAULTS.get(name, "")


def _selector(args: list[str]) -> dict[str, str]:
    """`--selector k1=v1 k2=v2 ...` (nargs="+": up to the next flag)."""
    if "--selector" not in args:
        return {}
    out = {}
    for word in args[args.index("--selector") + 1:]:
        if word.startswith("--"):
            break
        key, _, value = word.partition("=")
        out[key] = value
    return out


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Worker:
    pod: str            # uid
    url: str
    texts: list[str] = field(default_factory=list)
    size: int = 0       # characters of its approximate tree (the trie's nodes)
    processed: int = 0
    running: int = 0

    def match(self, text: str) -> int:
        return max((_common_prefix(text, t) for t in self.texts), default=0)

    def insert(self, text: str) -> None:
        self.size += len(text) - self.match(text)
        self.texts.append(text)


@dataclass
class RouterState:
    workers: dict[str, Worker] = field(default_factory=dict)   # by pod uid
    requests: dict[str, int] = field(default_factory=dict)     # by route
    hits: int = 0
    misses: int = 0
    balancing: int = 0
    turn: int = 0


class SglangRouters:
    """Every fake router of one API server, by router pod uid."""

    def __init__(self, store: Store, engines: FakeEngines) -> None:
        self.store, self.engines = store, engines
        self.state: dict[str, RouterState] = {}
        self.rng = random.Random(7)

    def answer(self, pod: Obj, container: Obj, port: str, method: str, path: str,
               body: bytes) -> tuple[int, str, str]:
        args = [str(a) for a in container.get("args") or []]
        state = self.state.setdefault(pod["metadata"]["uid"], RouterState())
        self._discover(pod, args, state)
        path = "/" + path.lstrip("/")
        if port == _flag(args, "--prometheus-port"):
            if method == "GET" and path == "/metrics":
                return 200, "text/plain; version=0.0.4", metrics(state)
            return 404, "text/plain", ""
        if method == "GET" and path in ("/liveness", "/health"):
            return 200, "text/plain", ""
        if method == "GET" and path == "/readiness":
            return (200, "text/plain", "") if state.workers else _error(503, "No healthy workers")
        if method == "POST" and path in ROUTES:
            return self._forward(state, args, path, body)
        return _error(404, "Not Found")

    def _discover(self, pod: Obj, args: list[str], state: RouterState) -> None:
        """The pod watch (service_discovery.rs), replayed from the store's current pods."""
        ns = _flag(args, "--service-discovery-namespace") or pod["metadata"]["namespace"]
        wanted = _selector(args)
        if "--service-discovery" not in args or not wanted or \
                not self._may_watch(pod, ns):
            state.workers.clear()
            return
        port, seen = _flag(args, "--service-discovery-port"), set()
        for p in self.store.items("pods", ns):
            if not match_label_selector({"matchLabels": wanted},
                                        p["metadata"].get("labels") or {}):
                continue
            uid, status = p["metadata"]["uid"], p.get("status") or {}
            seen.add(uid)
            if p["metadata"].get("deletionTimestamp"):
                state.workers.pop(uid, None)
            elif uid not in state.workers and status.get("podIP") and \
                    status.get("phase") == "Running" and _ready(p):
                state.workers[uid] = Worker(uid, f"http://{status['podIP']}:{port}")
        for uid in [u for u in state.workers if u not in seen]:  # gone from the API
            del state.workers[uid]

    def _may_watch(self, pod: Obj, ns: str) -> bool:
        """The router's ServiceAccount may list and watch pods in `ns` (RBAC RoleBindings
        with a ServiceAccount subject; Kubernetes docs "Using RBAC Authorization")."""
        sa = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        own = pod["metadata"]["namespace"]
        for binding in self.store.items("rbac.authorization.k8s.io/rolebindings", ns):
            if not any(s.get("kind") == "ServiceAccount" and s.get("name") == sa
                       and (s.get("namespace") or ns) == own
                       for s in binding.get("subjects") or []):
                continue
            if all(authz.role_allows(self.store, binding["roleRef"], ns, authz.Request(
                    verb, "", "pods", ns, True)) for verb in ("list", "watch")):
                return True
        return False

    def _forward(self, state: RouterState, args: list[str], path: str,
                 body: bytes) -> tuple[int, str, str]:
        state.requests[path] = state.requests.get(path, 0) + 1
        if not state.workers:
            return _error(503, "No available workers (all circuits open or unhealthy)")
        worker = self._choose(state, args, _request_text(path, body))
        pod = next((p for p in self.store.items("pods") if p["metadata"]["uid"] == worker.pod),
                   None)
        container = _engine_container(pod, _flag(args, "--service-discovery-port"))
        if pod is None or container is None:
            return _error(502, f"Failed to send request to worker {worker.url}")
        worker.processed += 1
        worker.running += 1
        try:
            return self.engines.answer(pod, container, "POST", path, body)
        finally:
            worker.running -= 1

    def _choose(self, state: RouterState, args: list[str], text: str) -> Worker:
        workers = sorted(state.workers.values(), key=lambda w: w.url)
        policy = _flag(args, "--policy")
        if policy == "round_robin":
            state.turn += 1
            return workers[(state.turn - 1) % len(workers)]
        if policy == "random":
            return self.rng.choice(workers)
        if policy == "power_of_two":
            pair = self.rng.sample(workers, min(2, len(workers)))
            return min(pair, key=lambda w: w.running)
        return self._cache_aware(state, args, workers, text)

    def _cache_aware(self, state: RouterState, args: list[str], workers: list[Worker],
                     text: str) -> Worker:
        loads = [w.running for w in workers]
        high, low = max(loads), min(loads)
        if high - low > int(_flag(args, "--balance-abs-threshold")) and \
                high > low * float(_flag(args, "--balance-rel-threshold")):
            state.balancing += 1
            chosen = min(workers, key=lambda w: w.running)
        else:
            best = max(workers, key=lambda w: w.match(text))  # first URL among equals
            rate = best.match(text) / len(text) if text else 0.0
            if rate > float(_flag(args, "--cache-threshold")):
                state.hits += 1
                chosen = best
            else:
                state.misses += 1
                chosen = min(workers, key=lambda w: w.size)
        chosen.insert(text)
        return chosen


def _ready(pod: Obj) -> bool:
    conds = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def _engine_container(pod: Obj | None, port: str) -> Obj | None:
    for c in ((pod or {}).get("spec") or {}).get("containers") or []:
        if any(str(p.get("containerPort")) == port for p in c.get("ports") or []):
            return dict(c)
    return None


def _request_text(path: str, body: bytes) -> str:
    """The text the cache-aware policy routes on: the prompt, or the chat messages' contents."""
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return ""
    if not isinstance(request, dict):
        return ""
    if path.endswith("chat/completions"):
        return " ".join(str(m.get("content", "")) for m in request.get("messages") or []
                        if isinstance(m, dict))
    prompt = request.get("prompt", "")
    return prompt if isinstance(prompt, str) else json.dumps(prompt)


def _error(status: int, message: str) -> tuple[int, str, str]:
    return status, "application/json", json.dumps({"error": {"message": message,
                                                             "code": status}})


def metrics(state: RouterState) -> str:
    rows: list[tuple[str, str, str, list[tuple[str, float]]]] = [
        ("sgl_router_requests_total", "counter", "Total requests by route",
         [(f'{{route="{r}"}}', n) for r, n in sorted(state.requests.items())]),
        ("sgl_router_processed_requests_total", "counter", "Requests processed per worker",
         [(f'{{worker="{w.url}"}}', w.processed) for w in state.workers.values()]),
        ("sgl_router_running_requests", "gauge", "Running requests per worker",
         [(f'{{worker="{w.url}"}}', w.running) for w in state.workers.values()]),
        ("sgl_router_tree_size", "gauge", "Approximate tree size per worker",
         [(f'{{worker="{w.url}"}}', w.size) for w in state.workers.values()]),
        ("sgl_router_active_workers", "gauge", "Active workers", [("", len(state.workers))]),
        ("sgl_router_cache_hits_total", "counter", "Total cache hits", [("", state.hits)]),
        ("sgl_router_cache_misses_total", "counter", "Total cache misses",
         [("", state.misses)]),
        ("sgl_router_load_balancing_events_total", "counter", "Load balancing events",
         [("", state.balancing)])]
    lines = []
    for name, kind, help_text, samples in rows:
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        lines += [f"{name}{labels} {float(v)}" for labels, v in samples]
    return "\n".join(lines) + "\n"
