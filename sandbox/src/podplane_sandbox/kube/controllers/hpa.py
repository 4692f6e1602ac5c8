"""The HorizontalPodAutoscaler controller (autoscaling/v2), on the virtual clock.

Kubernetes docs, "Horizontal Pod Autoscaling" (algorithm details, stabilization window,
scaling policies, default behavior) and kubernetes/kubernetes pkg/controller/podautoscaler
(replica_calculator.go, horizontal.go):
- Every 15 s (`--horizontal-pod-autoscaler-sync-period`) it reads its metrics and the target's
  scale (`spec.replicas`; `status.replicas` as the current count).
- A target at 0 replicas is not scaled (autoscaling is off until someone scales it up).
- External metric, AverageValue target: ratio = value / (target x current); within the 0.1
  tolerance nothing changes, else desired = ceil(value / target). Value target: ratio =
  value / target, desired = ceil(ratio x current). With several metrics the largest wins; a
  metric that cannot be read leaves the replicas as they are (condition ScalingActive False).
- Desired is kept within [minReplicas (default 1), maxReplicas].
- Stabilization: the recommendation is the highest of the last
  `behavior.scaleDown.stabilizationWindowSeconds` (default 300) when going down and the lowest
  of `scaleUp.stabilizationWindowSeconds` (default 0) when going up.
- Default policies: up by at most max(100 %, 4 pods) per 15 s, down by at most 100 % per 15 s.
The metric values come from the external metrics API; in the sandbox only KEDA serves it
(controllers/keda.py), for HPAs whose metric selector names a ScaledObject, and only through
the APIService `v1beta1.external.metrics.k8s.io` and KEDA's metrics apiserver
(keda_serving.py); when that way is broken the condition says FailedGetExternalMetric with
"unable to fetch metrics from external metrics API: <why>" (horizontal.go,
computeStatusForExternalMetric). Recommendations
live in the controller's memory, as in kube-controller-manager.
"""

from __future__ import annotations

import math
from typing import Any

from podplane_sandbox.kube.controllers import keda, keda_serving
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
HPAS = "autoscaling/horizontalpodautoscalers"
SYNC_SECONDS = 15.0
TOLERANCE = 0.1
DOWN_WINDOW, UP_WINDOW = 300, 0


def quantity(text: Any) -> float:
    s = str(text).strip()
    if s.endswith("m"):
        return float(s[:-1]) / 1000
    return float(s)


def _fmt(value: float) -> str:
    """A quantity as the API writes it (milli-units when fractional)."""
    return str(int(value)) if float(value).is_integer() else f"{round(value * 1000)}m"


class HorizontalPodAutoscaler(Controller):
    primary = HPAS

    def __init__(self, ctx: Ctx) -> None:
        super().__init__(ctx)
        self.history: dict[Key, list[tuple[float, int]]] = {}

    def reconcile(self, key: Key) -> float | None:
        hpa = self.primary_obj(key)
        if hpa is None or hpa["metadata"].get("deletionTimestamp"):
            self.history.pop(key, None)
            return None
        ref = hpa["spec"]["scaleTargetRef"]
        rt = self.ctx.store.registry.by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
        ns = hpa["metadata"].get("namespace", "default")
        target = self.ctx.store.find(rt.key, ns, ref["name"]) if rt else None
        if rt is None or target is None:
            self._status(hpa, None, None, [], ("AbleToScale", "False", "FailedGetScale"))
            return SYNC_SECONDS
        spec_replicas = int((target.get("spec") or {}).get("replicas") or 0)
        current = int((target.get("status") or {}).get("replicas") or spec_replicas)
        if spec_replicas == 0:
            self._status(hpa, current, 0, [], ("ScalingActive", "False", "ScalingDisabled"))
            return SYNC_SECONDS
        problem = keda_serving.broken(self.ctx.store) if _external_metrics(hpa) else None
        proposals, seen = (None, []) if problem else self._proposals(hpa, current)
        if proposals is None:
            self._status(hpa, current, spec_replicas, seen,
                         ("ScalingActive", "False", "FailedGetExternalMetric"),
                         message=_failed_message(hpa, problem))
            return SYNC_SECONDS
        desired = self._stabilized(key, hpa, spec_replicas, max(proposals))
        if desired != spec_replicas:
            new = clone(target)
            new["spec"]["replicas"] = desired
            self.ctx.update(rt.key, new)
        self._status(hpa, current, desired, seen, ("ScalingActive", "True", "ValidMetricFound"),
                     scaled=desired != spec_replicas)
        return SYNC_SECONDS

    def _proposals(self, hpa: Obj, current: int) -> tuple[list[int] | None, list[Obj]]:
        out: list[int] = []
        seen: list[Obj] = []
        for metric in hpa["spec"].get("metrics") or []:
            value = self._external(hpa, metric)
            if value is None:
                return None, seen
            target = metric["external"]["target"]
            if target.get("type") == "AverageValue":
                per_pod = quantity(target["averageValue"])
                ratio = value / (per_pod * max(current, 1))
                wanted = current if abs(ratio - 1) <= TOLERANCE else math.ceil(value / per_pod)
                shown = {"averageValue": _fmt(value / max(current, 1))}
            else:
                ratio = value / quantity(target["value"])
                wanted = current if abs(ratio - 1) <= TOLERANCE else math.ceil(ratio * current)
                shown = {"value": _fmt(value)}
            out.append(wanted)
            seen.append({"type": "External", "external": {
                "metric": metric["external"]["metric"], "current": shown}})
        return out, seen

    def _external(self, hpa: Obj, metric: Obj) -> float | None:
        if metric.get("type") != "External":
            return None   # only external metrics are emulated
        labels = ((metric["external"]["metric"].get("selector") or {}).get("matchLabels")
                  or {})
        so = self.ctx.store.find(keda.SCALED_OBJECTS, hpa["metadata"].get("namespace", ""),
                                 str(labels.get(keda.SO_LABEL, ""))) \
            if self.ctx.store.registry.by_key(keda.SCALED_OBJECTS) else None
        if so is None:
            return None
        names = [keda.metric_name(i, t) for i, t in enumerate(so["spec"].get("triggers") or [])]
        name = metric["external"]["metric"].get("name")
        return keda.external_value(self.ctx, so, names.index(name)) if name in names else None

    def _stabilized(self, key: Key, hpa: Obj, current: int, proposal: int) -> int:
        spec, now = hpa["spec"], self.ctx.now()
        lo, hi = int(spec.get("minReplicas") or 1), int(spec["maxReplicas"])
        proposal = max(lo, min(hi, proposal))
        behavior = spec.get("behavior") or {}
        down = _window(behavior, "scaleDown", DOWN_WINDOW)
        up = _window(behavior, "scaleUp", UP_WINDOW)
        history = [(t, r) for t, r in self.history.get(key, []) if now - t <= max(down, up)]
        history.append((now, proposal))
        self.history[key] = history
        up_rec = min(r for t, r in history if now - t <= up)
        down_rec = max(r for t, r in history if now - t <= down)
        desired = current
        if desired < up_rec:
            desired = up_rec
        if desired > down_rec:
            desired = down_rec
        desired = min(desired, max(2 * current, current + 4))   # default scale-up policy
        return max(lo, min(hi, desired))

    def _status(self, hpa: Obj, current: int | None, desired: int | None, seen: list[Obj],
                cond: tuple[str, str, str], scaled: bool = False, message: str = "") -> None:
        now = self.ctx.now_iso()
        status = clone(hpa.get("status") or {})
        before = (status.get("conditions") or [{}])[0]
        since = before.get("lastTransitionTime") if (before.get("type"), before.get(
            "status")) == cond[:2] else now
        status.update({"currentReplicas": current or 0, "desiredReplicas": desired or 0,
                       "currentMetrics": seen,
                       "conditions": [{"type": cond[0], "status": cond[1], "reason": cond[2],
                                       "lastTransitionTime": since,
                                       **({"message": message} if message else {})}]})
        if scaled:
            status["lastScaleTime"] = now
        self.ctx.update_status(HPAS, hpa, status)


def _external_metrics(hpa: Obj) -> list[Obj]:
    return [m for m in hpa["spec"].get("metrics") or [] if m.get("type") == "External"]


def _failed_message(hpa: Obj, problem: str | None) -> str:
    """What the HPA says when an external metric cannot be read (horizontal.go)."""
    metrics = _external_metrics(hpa)
    name = metrics[0]["external"]["metric"].get("name", "") if metrics else ""
    ns = hpa["metadata"].get("namespace", "default")
    why = problem or "no value for the metric"
    return ("the HPA was unable to compute the replica count: unable to get external metric "
            f"{ns}/{name}: unable to fetch metrics from external metrics API: {why}")


def _window(behavior: Obj, direction: str, default: int) -> int:
    found = (behavior.get(direction) or {}).get("stabilizationWindowSeconds")
    return default if found is None else int(found)
