"""KEDA (kedacore/keda v2): ScaledObject -> the HPA KEDA makes for it, and the external metric
that HPA reads. Generic over `scaleTargetRef` (any kind the HPA controller can scale).

Rules and their sources:
- KEDA acts only while its operator runs: the Deployment `keda/keda-operator` has a ready
  replica (the feature installs it; kedacore/keda config/manager). Otherwise ScaledObjects
  stay as written, without status, and nothing scales.
- The HPA: named `keda-hpa-<ScaledObject name>` unless
  `advanced.horizontalPodAutoscalerConfig.name` says otherwise, owned by the ScaledObject
  (deleting it deletes the HPA), `minReplicas` = `minReplicaCount` (KEDA itself scales 0 <-> 1,
  the HPA's minimum is at least 1), `maxReplicas` = `maxReplicaCount` (default 100), the
  `behavior` of `advanced.horizontalPodAutoscalerConfig`, one External metric per trigger
  named `s<index>-<scaler>-<name>` and selected by the label `scaledobject.keda.sh/name`, its
  target `AverageValue` unless the trigger's `metricType` says `Value` (KEDA docs, "Scaling
  Deployments"; "Concepts: External metrics"). Status: `hpaName`, `scaleTargetKind`,
  `externalMetricNames`, conditions Ready and Active (some trigger above its activation value).
- The metric: read when the HPA asks (KEDA's metrics server queries the scaler then). The
  `prometheus` scaler only on AMP (keda_prometheus.py); otherwise only the
  `metrics-api` scaler is emulated (keda.sh/docs/2.17/scalers/metrics-api): GET `url`,
  `format: prometheus` parsed for the metric selector in `valueLocation` (the first sample
  whose labels match, as KEDA's getValueFromPrometheusResponse does); with
  `aggregateFromKubeServiceEndpoints: "true"` every ready endpoint of the Service the URL names
  (`<svc>.<ns>.svc...:<pod port>`) is read and combined by `aggregationType` (average default,
  sum, max, min); without it, one endpoint in turn. URLs outside the cluster are unreachable
  from the sandbox: the metric is unavailable (the HPA says so and keeps its replicas).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from podplane_sandbox.kube.controllers import keda_prometheus
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key, owner_ref
from podplane_sandbox.kube.fake_engine import engine_of, engines_of
from podplane_sandbox.kube.service_proxy import ready_endpoints
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
SCALED_OBJECTS = "keda.sh/scaledobjects"
HPAS = "autoscaling/horizontalpodautoscalers"
OPERATOR = ("keda", "keda-operator")
SO_LABEL = "scaledobject.keda.sh/name"
POLLING_SECONDS = 30.0   # KEDA's default pollingInterval
SELECTOR = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?$')
LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


def controllers(ctx: Ctx) -> list[Controller]:
    return [Keda(ctx)]


def hpa_name(so: Obj) -> str:
    config = (so["spec"].get("advanced") or {}).get("horizontalPodAutoscalerConfig") or {}
    return str(config.get("name") or f"keda-hpa-{so['metadata']['name']}")


def metric_name(index: int, trigger: Obj) -> str:
    """KEDA's external metric name: `s<index>-` + the scaler's normalized name."""
    where = str((trigger.get("metadata") or {}).get("valueLocation", ""))
    raw = f"{trigger.get('type', '')}-{where}".replace("metrics-api-", "metric-api-", 1)
    return f"s{index}-" + re.sub(r"[^a-z0-9-]", "-", raw.lower())


class Keda(Controller):
    primary = SCALED_OBJECTS
    owned = (HPAS,)

    def keys_for(self, event: Event) -> Iterable[Key]:
        if self.ctx.store.registry.by_key(SCALED_OBJECTS) is None:
            return
        yield from super().keys_for(event)
        meta = event.obj["metadata"]
        if event.rt_key == "apps/deployments" and (meta.get("namespace"),
                                                   meta["name"]) == OPERATOR:
            yield from self.initial_keys()

    def initial_keys(self) -> Iterable[Key]:
        if self.ctx.store.registry.by_key(SCALED_OBJECTS) is not None:
            yield from super().initial_keys()

    def reconcile(self, key: Key) -> float | None:
        if self.ctx.store.registry.by_key(SCALED_OBJECTS) is None:
            return None
        so = self.primary_obj(key)
        if so is None or so["metadata"].get("deletionTimestamp") or not running(self.ctx):
            return None   # the operator's Deployment becoming ready is an event
        hpa = self._ensure_hpa(so)
        values = [external_value(self.ctx, so, i) for i in range(len(_triggers(so)))]
        active = any(v is not None and v > _activation(t)
                     for v, t in zip(values, _triggers(so), strict=True))
        now = self.ctx.now_iso()
        status = clone(so.get("status") or {})
        status.update({"hpaName": hpa["metadata"]["name"],
                       "scaleTargetKind": _target_kind(so),
                       "externalMetricNames": [metric_name(i, t)
                                               for i, t in enumerate(_triggers(so))]})
        status["conditions"] = [
            _cond("Ready", "True", "ScaledObjectReady", "ScaledObject is defined correctly "
                  "and is ready for scaling", now),
            _cond("Active", "True" if active else "False",
                  "ScalerActive" if active else "ScalerNotActive",
                  "Scaling is performed because triggers are active" if active else
                  "Scaling is not performed because triggers are not active", now)]
        if [c["status"] for c in status["conditions"]] != \
                [c["status"] for c in (so.get("status") or {}).get("conditions") or []] or \
                status.get("hpaName") != (so.get("status") or {}).get("hpaName"):
            self.ctx.update_status(SCALED_OBJECTS, so, status)
        return float(so["spec"].get("pollingInterval") or POLLING_SECONDS)

    def _ensure_hpa(self, so: Obj) -> Obj:
        wanted = _hpa(so)
        ns = so["metadata"].get("namespace", "default")
        found = self.ctx.store.find(HPAS, ns, wanted["metadata"]["name"])
        if found is None:
            return self.ctx.create(HPAS, wanted)
        if found["spec"] != wanted["spec"]:
            new = clone(found)
            new["spec"] = wanted["spec"]
            return self.ctx.update(HPAS, new)
        return found


def running(ctx: Ctx) -> bool:
    dep = ctx.store.find("apps/deployments", *OPERATOR)
    return dep is not None and int((dep.get("status") or {}).get("readyReplicas") or 0) > 0


def _triggers(so: Obj) -> list[Obj]:
    return list(so["spec"].get("triggers") or [])


def _activation(trigger: Obj) -> float:
    meta = trigger.get("metadata") or {}
    return float(meta.get("activationTargetValue") or meta.get("activationThreshold") or 0)


def _target_kind(so: Obj) -> str:
    ref = so["spec"].get("scaleTargetRef") or {}
    return f"{ref.get('apiVersion', 'apps/v1')}.{ref.get('kind', 'Deployment')}"


def _cond(kind: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": now}


def _hpa(so: Obj) -> Obj:
    meta, spec = so["metadata"], so["spec"]
    ref = spec.get("scaleTargetRef") or {}
    config = (spec.get("advanced") or {}).get("horizontalPodAutoscalerConfig") or {}
    metrics = []
    for i, trigger in enumerate(_triggers(so)):
        said = trigger.get("metadata") or {}   # metrics-api says targetValue, prometheus
        target = str(said.get("targetValue") or said.get("threshold") or "1")   # threshold
        kind = trigger.get("metricType") or "AverageValue"
        metrics.append({"type": "External", "external": {
            "metric": {"name": metric_name(i, trigger),
                       "selector": {"matchLabels": {SO_LABEL: meta["name"]}}},
            "target": {"type": kind, "averageValue" if kind == "AverageValue" else "value":
                       target}}})
    hpa_spec: Obj = {
        "scaleTargetRef": {"apiVersion": ref.get("apiVersion", "apps/v1"),
                           "kind": ref.get("kind", "Deployment"), "name": ref["name"]},
        "minReplicas": max(1, int(spec.get("minReplicaCount") or 0)),
        "maxReplicas": int(spec.get("maxReplicaCount") or 100), "metrics": metrics}
    if config.get("behavior"):
        hpa_spec["behavior"] = clone(config["behavior"])
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": hpa_name(so), "namespace": meta.get("namespace", "default"),
                         "labels": {"app.kubernetes.io/managed-by": "keda-operator",
                                    SO_LABEL: meta["name"]},
                         "ownerReferences": [owner_ref(so)]},
            "spec": hpa_spec}


def external_value(ctx: Ctx, so: Obj, index: int) -> float | None:
    """The trigger's metric now, as KEDA's metrics server answers the HPA (None: failed)."""
    if not running(ctx) or index >= len(_triggers(so)):
        return None
    trigger = _triggers(so)[index]
    if trigger.get("type") == "prometheus":   # on AMP only (keda_prometheus.py)
        return keda_prometheus.value(ctx, trigger.get("metadata") or {})
    if trigger.get("type") != "metrics-api":
        return None   # other scalers are not emulated
    meta = trigger.get("metadata") or {}
    url = urlsplit(str(meta.get("url", "")))
    parts = (url.hostname or "").split(".")
    if len(parts) < 3 or parts[2] != "svc" or meta.get("format") != "prometheus":
        return None
    svc = ctx.store.find("services", parts[1], parts[0])
    if svc is None:
        return None
    pods = ready_endpoints(ctx.store, parts[1], svc)
    if str(meta.get("aggregateFromKubeServiceEndpoints", "false")).lower() != "true":
        pods = pods[:1]
    values = [v for p in pods
              if (v := _scrape(ctx, p, url.port or 80, url.path, str(meta["valueLocation"])))
              is not None]
    if not values:
        return None
    how = str(meta.get("aggregationType", "average"))
    return {"sum": sum(values), "max": max(values), "min": min(values)}.get(
        how, sum(values) / len(values))


def _scrape(ctx: Ctx, pod: Obj, port: int, path: str, selector: str) -> float | None:
    for c in (pod.get("spec") or {}).get("containers") or []:
        if any(int(p.get("containerPort", 0)) == port for p in c.get("ports") or []):
            if engine_of(c) is None:
                return None   # nothing answers on that port
            status, _, text = engines_of(ctx.store).answer(pod, c, "GET", path, b"")
            return prometheus_value(text, selector) if status == 200 else None
    return None   # "connection refused"


def prometheus_value(text: str, selector: str) -> float | None:
    """The first sample of the selector's metric whose labels match it."""
    m = SELECTOR.match(selector.strip())
    if m is None:
        return None
    wanted = dict(LABEL.findall(m.group(3) or ""))
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        s = SELECTOR.match(line.rsplit(" ", 1)[0].strip())
        if s is None or s.group(1) != m.group(1):
            continue
        labels = dict(LABEL.findall(s.group(3) or ""))
        if all(labels.get(k) == v for k, v in wanted.items()):
            return float(line.rsplit(" ", 1)[1])
    return None
