"""Graceful termination of a deleted pod, on the virtual clock, as an adversary.

Kubernetes docs, "Pod Lifecycle", Termination of Pods:
- A delete sets `deletionTimestamp` and `deletionGracePeriodSeconds`: the request's
  `gracePeriodSeconds`, else the pod's `terminationGracePeriodSeconds` (default 30); 0 removes
  it at once (store.py).
- The kubelet runs each container's preStop hook, then sends SIGTERM; if the hook is still
  running when the grace period ends it gets one extension of 2 s. When the period is over,
  whatever still runs is killed (SIGKILL) and the pod is removed.
- "At the same time as the kubelet is starting graceful shutdown", the control plane takes the
  pod out of the Service's EndpointSlices (ready=false, serving/terminating, "EndpointSlices",
  Conditions). The two happen concurrently: the data path (kube-proxy, a load balancer, the
  API server's proxy reading its Endpoints cache) learns it only after a delay, so a new request
  may still reach the terminating pod (the docs' advice to keep serving for a while, and AWS's
  to sleep in preStop until the load balancer deregistered the target: EKS Best Practices,
  "Load Balancing"; kubernetes-sigs/aws-load-balancer-controller#3270 shows minutes). The
  sandbox keeps routing to a deleted pod for `propagation` virtual seconds (10 unless a test
  changes it); sources give no bound, so any non-zero value is a fair adversary.

A preStop hook the sandbox understands: `exec` of `sleep N` (also `sh -c "sleep N"`), and the
`sleep` action (KEP-3960). Any other hook (httpGet, another command) is taken to return at once:
the sandbox cannot tell what it waits for, so it grants it nothing.

After SIGTERM each engine behaves as its source says:
- vLLM (`vllm/entrypoints/launcher.py`, `serve_http`: the signal cancels the server task and
  the engine client context exits): new connections refused and every request in flight aborted
  at once; vllm-project/vllm#34730 states it ("SIGTERM ... immediate process termination") and
  adds `--shutdown-timeout N` (default 0): with it, new requests are refused and those in
  flight get up to N s to finish.
- SGLang (`sglang/srt/managers/tokenizer_manager.py`, `sigterm_watchdog`): the handler only sets
  `gracefully_exit`; a watchdog checks it every 5 s, then waits, 5 s at a time, until no request
  is left and kills its process tree. Upstream keeps accepting requests meanwhile; the sandbox
  refuses them (stricter, where vLLM's newer code does refuse).
- Any other container exits at SIGTERM.
A request in flight is answered only if it finishes before its engine stops; otherwise the
caller sees a reset connection. A pod that was not Running ran no hook: it goes at once.
"""

from __future__ import annotations

import math
import shlex
import weakref
from dataclasses import dataclass, field
from typing import Any

from podplane_sandbox.kube.fake_engine import engine_of
from podplane_sandbox.kube.util import parse_iso

Obj = dict[str, Any]
HOOK_EXTENSION_SECONDS = 2.0      # the one-off extension for a hook still running
SGLANG_WATCHDOG_SECONDS = 5.0     # tokenizer_manager.sigterm_watchdog's sleep
PROPAGATION_SECONDS = 10.0


def prestop_seconds(container: Obj) -> float:
    """How long the container's preStop hook runs, as far as the sandbox can tell."""
    hook = ((container.get("lifecycle") or {}).get("preStop")) or {}
    if "sleep" in hook:
        return float((hook["sleep"] or {}).get("seconds") or 0)
    command = [str(c) for c in ((hook.get("exec") or {}).get("command") or [])]
    if len(command) >= 3 and command[0] in ("sh", "/bin/sh", "bash", "/bin/bash") and \
            command[1] == "-c":
        command = shlex.split(command[2])
    if len(command) == 2 and command[0] in ("sleep", "/bin/sleep", "/usr/bin/sleep"):
        try:
            return max(0.0, float(command[1]))
        except ValueError:
            return 0.0
    return 0.0


def _flag(args: list[str], name: str) -> str | None:
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


@dataclass(frozen=True)
class Ending:
    """When a deleted pod's engine gets SIGTERM and when the kubelet kills what is left."""

    deleted_at: float
    sigterm_at: float
    kill_at: float
    engine: str | None
    shutdown_timeout: float   # vLLM --shutdown-timeout (0: abort at SIGTERM)


def ending_of(pod: Obj) -> Ending | None:
    """A pure function of the deleted pod's object (None while it is not being deleted)."""
    meta = pod["metadata"]
    deleted = parse_iso(meta.get("deletionTimestamp"))
    if deleted is None:
        return None
    grace = float(meta.get("deletionGracePeriodSeconds") or 0)
    containers = (pod.get("spec") or {}).get("containers") or []
    running = (pod.get("status") or {}).get("phase") == "Running"
    hook = max((prestop_seconds(c) for c in containers), default=0.0) if running else 0.0
    kill = deleted + grace + (HOOK_EXTENSION_SECONDS if hook > grace else 0.0)
    sigterm = deleted + min(hook, grace)
    engine_box = next((c for c in containers if engine_of(c)), None)
    engine = engine_of(engine_box) if engine_box and running else None
    args = [str(a) for a in (engine_box or {}).get("args") or []]
    timeout = float(_flag(args, "--shutdown-timeout") or 0) if engine == "vllm" else 0.0
    return Ending(deleted, sigterm, kill, engine, timeout)


@dataclass
class Terminations:
    """What the kubelet and the data path share: the finish times of the requests each pod
    accepted, and when each removed pod's engine stopped."""

    propagation: float = PROPAGATION_SECONDS
    accepted: dict[str, list[float]] = field(default_factory=dict)   # pod uid -> finish times
    stopped: dict[str, float] = field(default_factory=dict)          # pod uid -> engine stop

    def still_routed(self, pod: Obj, now: float) -> bool:
        """A deleted pod the data path has not yet heard about (it was Ready before)."""
        ending = ending_of(pod)
        return ending is not None and now < ending.deleted_at + self.propagation and \
            _was_ready(pod)

    def refuses(self, pod: Obj, now: float) -> bool:
        """The engine closed its listener (SIGTERM came) or is gone."""
        ending = ending_of(pod)
        return ending is not None and now >= ending.sigterm_at

    def accept(self, pod: Obj, finish_at: float) -> None:
        self.accepted.setdefault(pod["metadata"]["uid"], []).append(finish_at)

    def stop_at(self, pod: Obj, ending: Ending) -> float:
        """When the pod's containers are all gone (the kubelet removes it then)."""
        uid = pod["metadata"]["uid"]
        last = max(self.accepted.get(uid) or [ending.sigterm_at])
        start = ending.sigterm_at
        if ending.engine == "sglang":
            ticks = max(1, math.ceil(max(0.0, last - start) / SGLANG_WATCHDOG_SECONDS))
            end = start + ticks * SGLANG_WATCHDOG_SECONDS
        elif ending.engine == "vllm" and ending.shutdown_timeout > 0:
            end = min(start + ending.shutdown_timeout, max(start, last))
        else:
            end = start
        return min(end, ending.kill_at)

    def answered(self, store: Any, pod: Obj, finish_at: float) -> bool:
        """Did the request that finishes at `finish_at` get its answer from this pod?"""
        meta = pod["metadata"]
        uid = meta["uid"]
        if uid in self.stopped:
            return finish_at <= self.stopped[uid]
        now = store.find("pods", meta.get("namespace", ""), meta["name"])
        if now is None or now["metadata"]["uid"] != uid:
            return False   # removed without a graceful end (grace 0, node gone)
        ending = ending_of(now)
        return ending is None or finish_at <= self.stop_at(now, ending)

    def until_gone(self, pod: Obj, now: float) -> float | None:
        """The kubelet's wait before removing a deleted pod (None: remove it now)."""
        ending = ending_of(pod)
        if ending is None:
            return None
        if now < ending.sigterm_at:
            return ending.sigterm_at - now
        end = self.stop_at(pod, ending)
        if now < end:
            return end - now
        self.stopped[pod["metadata"]["uid"]] = end
        return None


def _was_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


_ALL: weakref.WeakKeyDictionary[Any, Terminations] = weakref.WeakKeyDictionary()


def terminations_of(store: Any) -> Terminations:
    """The terminations of one API server (kubelet and service proxy read the same)."""
    if store not in _ALL:
        _ALL[store] = Terminations()
    return _ALL[store]
