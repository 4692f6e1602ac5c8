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
- The scaler runs in the operator, as the operator's ServiceAccount: with
  `aggregateFromKubeServiceEndpoints` it lists `discovery.k8s.io` EndpointSlices in the
  Service's namespace (pkg/scalers/metrics_api_scaler.go getEndpointsUrlsFromServiceURL), so
  RBAC must let that account `list` `endpointslices` there (config/rbac/role.yaml grants it);
  Forbidden -> "failed to get kubernetes endpoints urls from configured service URL" and no
  value. KEDA before v2.20.0 listed them with an empty selector (`labels.NewSelector()` then a
  no-op `Matches`), i.e. every EndpointSlice of the namespace; commit 6387651 (PR #7642,
  issue #7641) selects `kubernetes.io/service-name=<svc>` and is first in v2.20.0 (`git tag
  --contains`). The version is the operator image's tag; one that is not a version (latest,
  main) is taken as current. Each address is read at the slice's port equal to the URL's,
  else at the scheme's default (80/443), once per address; an endpoint that fails is left out
  of the aggregate, and only all failing fails it (aggregateMetricsFromMultipleEndpoints).
- The HPA reaches this value only through KEDA's metrics apiserver (keda_serving.py), whose
  TLS the running operator's certificate rotation sets up (CertRotation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from podplane_sandbox.kube import authz
from podplane_sandbox.kube.controllers import keda_prometheus, keda_serving
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key, owner_ref
from podplane_sandbox.kube.fake_engine import engine_of, engines_of
from podplane_sandbox.kube.service_proxy import ready_endpoints
from podplane_sandbox.kube.store import Event, Store
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
SCALED_OBJECTS = "keda.sh/scaledobjects"
HPAS = "autoscaling/horizontalpodautoscalers"
OPERATOR = ("keda", "keda-operator")
SO_LABEL = "scaledobject.keda.sh/name"
POLLING_SECONDS = 30.0   # KEDA's default pollingInterval
SELECTOR = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?$')
VERSION = re.compile(r"^\d+\.\d+\.\d+$")
FIRST_WITH_SERVICE_SELECTOR = (2, 20, 0)   # kedacore/keda PR #7642 (commit 6387651)
LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


def controllers(ctx: Ctx) -> list[Controller]:
    return [Keda(ctx), CertRotation(ctx)]


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


class CertRotation(Controller):
    """The operator's certificate rotation (keda_serving.rotate), from the moment a container
    of it runs: the rotator starts with the manager, before the readiness probe passes
    (cmd/operator/main.go; config/manager/manager.yaml readinessProbe initialDelaySeconds 20).
    Again when its Deployment or pods, the APIService or RBAC change."""

    primary = "apps/deployments"
    RBAC = ("rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings",
            "rbac.authorization.k8s.io/clusterroles",
            "rbac.authorization.k8s.io/clusterrolebindings")

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        if (event.rt_key == self.primary and (meta.get("namespace"), meta["name"]) == OPERATOR) \
                or (event.rt_key == keda_serving.APISERVICES
                    and meta["name"] == keda_serving.EXTERNAL) \
                or (event.rt_key in self.RBAC and self.ctx.store.find(self.primary, *OPERATOR)) \
                or (event.rt_key == "pods" and meta.get("namespace") == OPERATOR[0]):
            yield OPERATOR

    def initial_keys(self) -> Iterable[Key]:
        if self.ctx.store.find(self.primary, *OPERATOR) is not None:
            yield OPERATOR

    def reconcile(self, key: Key) -> float | None:
        account = operator_account(self.ctx)
        if account is not None and _started(self.ctx):
            keda_serving.rotate(self.ctx, account)
        return None


def _started(ctx: Ctx) -> bool:
    """A pod of the operator's Deployment is Running (its container started)."""
    dep = ctx.store.find("apps/deployments", *OPERATOR) or {}
    wanted = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return bool(wanted) and any(
        (p.get("status") or {}).get("phase") == "Running"
        and all((p["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())
        for p in ctx.store.items("pods", OPERATOR[0]))


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
    port = url.port or (443 if url.scheme == "https" else 80)
    if str(meta.get("aggregateFromKubeServiceEndpoints", "false")).lower() != "true":
        targets = [(p, port) for p in ready_endpoints(ctx.store, parts[1], svc)[:1]]
    elif not may_list_slices(ctx, parts[1]):
        return None   # Forbidden: "failed to get kubernetes endpoints urls ..."
    else:
        targets = slice_endpoints(ctx.store, parts[1], svc, port, url.scheme,
                                  every_slice=before_7642(ctx))
    values = [v for p, at in targets
              if (v := _scrape(ctx, p, at, url.path, str(meta["valueLocation"])))
              is not None]
    if not values:
        return None
    how = str(meta.get("aggregationType", "average"))
    return {"sum": sum(values), "max": max(values), "min": min(values)}.get(
        how, sum(values) / len(values))


def operator_account(ctx: Ctx) -> tuple[str, str] | None:
    """(namespace, ServiceAccount) the operator's pods run as."""
    dep = ctx.store.find("apps/deployments", *OPERATOR)
    if dep is None:
        return None
    pod = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
    return OPERATOR[0], str(pod.get("serviceAccountName") or "default")


def may_list_slices(ctx: Ctx, namespace: str) -> bool:
    account = operator_account(ctx)
    return account is not None and authz.service_account_allowed(
        ctx.store, account, authz.Request("list", "discovery.k8s.io", "endpointslices",
                                          namespace, True))


def operator_version(ctx: Ctx) -> tuple[int, ...] | None:
    """The operator image's tag as numbers (2.20.2 -> (2, 20, 2)); None if not a version."""
    dep = ctx.store.find("apps/deployments", *OPERATOR) or {}
    pod = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
    for c in pod.get("containers") or []:
        tag = str(c.get("image", "")).rpartition(":")[2].lstrip("v")
        if VERSION.match(tag):
            return tuple(int(n) for n in tag.split("."))
    return None


def before_7642(ctx: Ctx) -> bool:
    found = operator_version(ctx)
    return found is not None and found < FIRST_WITH_SERVICE_SELECTOR


def slice_endpoints(store: Store, ns: str, svc: Obj, port: int, scheme: str, *,
                    every_slice: bool) -> list[tuple[Obj, int]]:
    """(pod, port) for each address the scaler reads: the Service's EndpointSlices, or every
    slice of the namespace before PR #7642; once per address."""
    services = [s for s in store.items("services", ns) if (s.get("spec") or {}).get(
        "selector")] if every_slice else [svc]
    seen: set[str] = set()
    out: list[tuple[Obj, int]] = []
    for service in sorted(services, key=lambda s: str(s["metadata"]["name"])):
        for pod in ready_endpoints(store, ns, service):
            address = str((pod.get("status") or {}).get("podIP") or pod["metadata"]["name"])
            if address in seen:
                continue
            seen.add(address)
            found = port in _slice_ports(service, pod)
            out.append((pod, port if found else (443 if scheme == "https" else 80)))
    return out


def _slice_ports(svc: Obj, pod: Obj) -> set[int]:
    """The pod ports an EndpointSlice of the Service lists (its targetPorts, resolved)."""
    named = {str(p.get("name")): int(p["containerPort"])
             for c in (pod.get("spec") or {}).get("containers") or []
             for p in c.get("ports") or [] if p.get("name") and p.get("containerPort")}
    out: set[int] = set()
    for p in (svc.get("spec") or {}).get("ports") or []:
        target = p.get("targetPort", p.get("port"))
        if str(target).isdigit():
            out.add(int(target))
        elif str(target) in named:
            out.add(named[str(target)])
    return out


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
