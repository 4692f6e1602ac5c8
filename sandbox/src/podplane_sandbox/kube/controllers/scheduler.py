"""The scheduler: resources, node selectors, node affinity, taints and tolerations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key
from podplane_sandbox.kube.selectors import match_expression
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, quantity

Obj = dict[str, Any]


def pod_requests(pod: Obj) -> dict[str, float]:
    total: dict[str, float] = {"pods": 1.0}
    for c in pod.get("spec", {}).get("containers") or []:
        res = c.get("resources") or {}
        merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        for name, value in merged.items():
            total[name] = total.get(name, 0.0) + quantity(value)
    return total


def tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def node_matches(pod: Obj, node: Obj) -> str | None:
    """None when the node passes every filter except resources, else the reason it fails."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    if node.get("spec", {}).get("unschedulable"):
        return "node(s) were unschedulable"
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return "node(s) didn't match Pod's node affinity/selector"
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    if terms and not any(
        all(match_expression(e, labels) for e in t.get("matchExpressions") or []) for t in terms
    ):
        return "node(s) didn't match Pod's node affinity/selector"
    for taint in node.get("spec", {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(
            spec.get("tolerations") or [], taint
        ):
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    conds = {c["type"]: c["status"] for c in (node.get("status") or {}).get("conditions") or []}
    if conds.get("Ready") != "True":
        return "node(s) were not ready"
    return None


class Usage:
    """Requests of the pods bound to each node, kept up to date from pod events."""

    def __init__(self) -> None:
        self.by_pod: dict[tuple[str, str], tuple[str, dict[str, float]]] = {}
        self.by_node: dict[str, dict[str, float]] = {}

    def observe(self, event: Event) -> None:
        meta = event.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        self._drop(key)
        node = event.obj.get("spec", {}).get("nodeName")
        phase = (event.obj.get("status") or {}).get("phase")
        if event.type != "DELETED" and node and phase not in ("Succeeded", "Failed"):
            req = pod_requests(event.obj)
            self.by_pod[key] = (node, req)
            used = self.by_node.setdefault(node, {})
            for k, v in req.items():
                used[k] = used.get(k, 0.0) + v

    def _drop(self, key: tuple[str, str]) -> None:
        old = self.by_pod.pop(key, None)
        if old:
            used = self.by_node.get(old[0], {})
            for k, v in old[1].items():
                used[k] = used.get(k, 0.0) - v


class Scheduler(Controller):
    primary = "pods"

    def __init__(self, ctx: Ctx) -> None:
        super().__init__(ctx)
        self.usage = Usage()
        self.pending: set[Key] = set()
        for pod in ctx.store.items("pods"):
            self.usage.observe(Event(0, "ADDED", "pods", pod))

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.rt_key == "pods":
            self.usage.observe(event)
            meta = event.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            unbound = not event.obj.get("spec", {}).get("nodeName")
            if event.type != "DELETED" and unbound and not meta.get("deletionTimestamp"):
                self.pending.add(key)
                yield key
            else:
                self.pending.discard(key)
                if event.type == "DELETED" or (event.obj.get("status") or {}).get("phase") in (
                    "Succeeded",
                    "Failed",
                ):
                    yield from sorted(self.pending)
        elif event.rt_key == "nodes":
            yield from sorted(self.pending)

    def reconcile(self, key: Key) -> float | None:
        pod = self.primary_obj(key)
        if (
            pod is None
            or pod.get("spec", {}).get("nodeName")
            or pod["metadata"].get("deletionTimestamp")
        ):
            return None
        nodes = sorted(self.ctx.store.items("nodes"), key=lambda n: n["metadata"]["name"])
        need = pod_requests(pod)
        reasons: dict[str, int] = {}
        for node in nodes:
            reason = node_matches(pod, node) or self._fit(node, need)
            if reason is None:
                self._bind(pod, node)
                return None
            reasons[reason] = reasons.get(reason, 0) + 1
        self._unschedulable(pod, len(nodes), reasons)
        return None

    def _fit(self, node: Obj, need: dict[str, float]) -> str | None:
        alloc = (node.get("status") or {}).get("allocatable") or {}
        used = self.usage.by_node.get(node["metadata"]["name"], {})
        for name, amount in need.items():
            if amount and used.get(name, 0.0) + amount > quantity(alloc.get(name, 0)) + 1e-9:
                return "Too many pods" if name == "pods" else f"Insufficient {name}"
        return None

    def _bind(self, pod: Obj, node: Obj) -> None:
        new = clone(pod)
        new["spec"]["nodeName"] = node["metadata"]["name"]
        bound = self.ctx.update("pods", new)
        status = clone(bound.get("status") or {})
        status["conditions"] = [
            c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"
        ] + [{"type": "PodScheduled", "status": "True", "lastTransitionTime": self.ctx.now_iso()}]
        self.ctx.update_status("pods", bound, status)
        self.ctx.event(
            bound,
            "Scheduled",
            f"Successfully assigned {pod['metadata'].get('namespace')}"
            f"/{pod['metadata']['name']} to {node['metadata']['name']}",
        )

    def _unschedulable(self, pod: Obj, total: int, reasons: dict[str, int]) -> None:
        detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        message = f"0/{total} nodes are available" + (f": {detail}." if detail else ".")
        status = clone(pod.get("status") or {})
        cond = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastTransitionTime": self.ctx.now_iso(),
        }
        old = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None
        )
        if old and old.get("message") == message:
            return
        status["phase"] = "Pending"
        status["conditions"] = [
            c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"
        ] + [cond]
        self.ctx.update_status("pods", pod, status)
        self.ctx.event(pod, "FailedScheduling", message, "Warning")
