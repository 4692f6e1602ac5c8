"""The sandbox's metrics-api scaler reads Prometheus text as KEDA does (first sample whose
labels match the selector), and the fake engines' gauges come from the load on a Service.

The way from the HPA to KEDA (keda_serving.py), on an in-memory store: KEDA as its upstream
config/ lays it out is a way, each missing piece breaks it as Kubernetes reports it, the
scaler needs to list EndpointSlices; KEDA before PR #7642 reads every endpoint of the
namespace; podplane's KEDA and ScaledObjects pass both."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from podplane.domain.inference import autoscaling as asc
from podplane.domain.manifests import feature_operators
from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.kube.controllers import keda, keda_serving
from podplane_sandbox.kube.controllers.framework import Ctx
from podplane_sandbox.kube.controllers.hpa import quantity
from podplane_sandbox.kube.fake_engine import Counters, engines_of, metrics
from podplane_sandbox.kube.resources import Registry
from podplane_sandbox.kube.store import Store

TEXT = metrics("vllm", "qwen", Counters(requests=3), (5, 2)) + \
    'vllm:num_requests_running{model_name="other"} 9.0\n'


def test_selector_with_and_without_labels() -> None:
    assert keda.prometheus_value(TEXT, "vllm:num_requests_running") == 5.0
    assert keda.prometheus_value(TEXT, 'vllm:num_requests_running{model_name="other"}') == 9.0
    assert keda.prometheus_value(TEXT, "vllm:num_requests_waiting") == 2.0
    assert keda.prometheus_value(TEXT, "vllm:request_success_total") == 3.0
    assert keda.prometheus_value(TEXT, "sglang:num_queue_reqs") is None
    assert keda.prometheus_value(TEXT, 'vllm:num_requests_running{model_name="x"}') is None


def test_sglang_gauges_and_names() -> None:
    text = metrics("sglang", "m", Counters(), (1, 4))
    assert keda.prometheus_value(text, "sglang:num_queue_reqs") == 4.0
    assert "# TYPE sglang:num_running_reqs gauge" in text
    trigger = {"type": "metrics-api", "metadata": {"valueLocation": "vllm:num_requests_running"}}
    assert keda.metric_name(0, trigger) == "s0-metric-api-vllm-num-requests-running"
    assert quantity("2500m") == 2.5 and quantity("8") == 8.0


# --- The way to KEDA's metrics, on an in-memory store (no API server, no clock running) ---

def _store() -> Store:
    store = Store(Registry(), VirtualClock(speed=0))
    for ns in ("default", "keda", "kube-system"):
        store.create(_rt(store, "namespaces"), {"metadata": {"name": ns}})
    return store


def _rt(store: Store, key: str) -> Any:
    found = store.registry.by_key(key)
    assert found is not None, key
    return found


def _put(store: Store, *objs: dict[str, Any]) -> None:
    """Each object as applied, and for a Deployment one ready pod of its template."""
    for obj in objs:
        rt = store.registry.by_kind(obj["apiVersion"], obj["kind"])
        assert rt is not None, obj["kind"]
        if obj["kind"] == "Namespace" and store.find("namespaces", "", obj["metadata"]["name"]):
            continue
        made = store.create(rt, obj, obj["metadata"].get("namespace", ""))
        if obj["kind"] == "Deployment":
            made["status"] = {"readyReplicas": 1, "replicas": 1}
            _pod(store, made)


def _pod(store: Store, dep: dict[str, Any]) -> None:
    template, ns = dep["spec"]["template"], dep["metadata"]["namespace"]
    count = len(store.items("pods"))
    store.create(_rt(store, "pods"), {
        "metadata": {"name": f"{dep['metadata']['name']}-0", "namespace": ns,
                     "labels": dict(template["metadata"]["labels"])},
        "spec": dict(template["spec"]),
        "status": {"phase": "Running", "podIP": f"10.0.0.{count + 1}",
                   "conditions": [{"type": "Ready", "status": "True"}]}}, ns)


def _ctx(store: Store) -> Ctx:
    return Ctx(store, store.clock, None)  # type: ignore[arg-type]


def _world(*objs: dict[str, Any]) -> Store:
    """The objects applied, then what the running operator's certificate rotation writes."""
    store = _store()
    _put(store, *objs)
    account = keda.operator_account(_ctx(store))
    if account is not None:
        keda_serving.rotate(_ctx(store), account)
    return store


def test_podplanes_keda_gives_the_hpa_a_way_to_its_metrics() -> None:
    """podplane's KEDA manifests, as the feature applies them: the APIService is Available,
    the HPA's request reaches the operator over TLS its certificate rotation set up, and the
    scaler may list EndpointSlices. (Before the APIService, Services and RBAC were rendered:
    'could not find the requested resource'; before cert rotation: FailedDiscoveryCheck.)"""
    store = _world(*[m for m in feature_operators.keda("keda", "2.20.2")
                     if m["kind"] != "CustomResourceDefinition"])
    assert keda_serving.broken(store) is None
    apiservice = store.find(keda_serving.APISERVICES, "", keda_serving.EXTERNAL)
    assert apiservice is not None and apiservice["spec"]["caBundle"]
    assert keda_serving.available(store, apiservice).ok
    assert store.find("secrets", "keda", "kedaorg-certs") is not None
    assert keda.may_list_slices(_ctx(store), "default")


UPSTREAM_RULES = [{"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
                   "verbs": ["get", "list", "watch"]},
                  {"apiGroups": ["apiregistration.k8s.io"], "resources": ["apiservices"],
                   "verbs": ["get", "list", "patch", "update", "watch"]}]


def _upstream(version: str = "2.20.2", *, leave: str = "") -> list[dict[str, Any]]:
    """KEDA as kedacore/keda's config/ lays it out (only what the way to a metric uses),
    minus the object named `leave`."""
    sa = {"kind": "ServiceAccount", "name": "keda-operator", "namespace": "keda"}
    rbac = "rbac.authorization.k8s.io/v1"

    def dep(name: str, image: str, args: list[str]) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": "keda"},
                "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"serviceAccountName": "keda-operator", "containers": [
                        {"name": name, "image": image, "args": args}]}}}}

    def bind(kind: str, name: str, ns: str, role: tuple[str, str]) -> dict[str, Any]:
        meta = {"name": name, **({"namespace": ns} if ns else {})}
        return {"apiVersion": rbac, "kind": kind, "metadata": meta, "subjects": [sa],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role[0],
                            "name": role[1]}}

    def svc(name: str, port: int, target: int) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "keda"},
                "spec": {"selector": {"app": name},
                         "ports": [{"port": port, "targetPort": target}]}}

    objs = {
        "apiservice": {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                       "metadata": {"name": "v1beta1.external.metrics.k8s.io"},
                       "spec": {"service": {"name": "keda-metrics-apiserver",
                                            "namespace": "keda"},
                                "group": "external.metrics.k8s.io", "version": "v1beta1",
                                "groupPriorityMinimum": 100, "versionPriority": 100}},
        "metrics-service": svc("keda-metrics-apiserver", 443, 6443),
        "operator-service": svc("keda-operator", 9666, 9666),
        "delegator": bind("ClusterRoleBinding", "keda-system-auth-delegator", "",
                          ("ClusterRole", "system:auth-delegator")),
        "auth-reader": bind("RoleBinding", "keda-auth-reader", "kube-system",
                            ("Role", "extension-apiserver-authentication-reader")),
        "role": {"apiVersion": rbac, "kind": "ClusterRole",
                 "metadata": {"name": "keda-operator"}, "rules": UPSTREAM_RULES},
        "binding": bind("ClusterRoleBinding", "keda-operator", "",
                        ("ClusterRole", "keda-operator")),
        "cert-role": {"apiVersion": rbac, "kind": "Role",
                      "metadata": {"name": "keda-operator", "namespace": "keda"},
                      "rules": [{"apiGroups": [""], "resources": ["secrets"],
                                 "verbs": ["create", "get", "list", "watch"]}]},
        "cert-binding": bind("RoleBinding", "keda-operator", "keda",
                             ("Role", "keda-operator")),
        "adapter": dep("keda-metrics-apiserver",
                       f"ghcr.io/kedacore/keda-metrics-apiserver:{version}", []),
        "operator": dep("keda-operator", f"ghcr.io/kedacore/keda:{version}",
                        [] if leave == "rotation" else ["--enable-cert-rotation=true"])}
    return [o for k, o in objs.items() if k != leave]


def test_upstreams_layout_is_a_way_and_the_apiservice_says_available() -> None:
    store = _world(*_upstream())
    assert keda_serving.broken(store) is None
    assert keda.may_list_slices(_ctx(store), "default")


@pytest.mark.parametrize(("leave", "said"), [
    ("apiservice", "could not find the requested resource"),
    ("metrics-service", "ServiceNotFound"),
    ("adapter", "MissingEndpoints"),
    ("delegator", "system:auth-delegator"),
    ("auth-reader", "extension-apiserver-authentication"),
    ("operator-service", "lookup keda-operator.keda.svc.cluster.local: no such host"),
    ("rotation", "FailedDiscoveryCheck"),      # no CA in the APIService, no certificates
    ("cert-role", "FailedDiscoveryCheck")])    # the operator may not create its Secret
def test_each_missing_piece_breaks_the_way_as_kubernetes_says(leave: str, said: str) -> None:
    found = keda_serving.broken(_world(*_upstream(leave=leave)))
    assert found is not None and said in found, found


def test_an_operator_without_a_ready_pod_refuses_the_adapters_call() -> None:
    store = _world(*_upstream())
    pod = store.find("pods", "keda", "keda-operator-0")
    assert pod is not None
    pod["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    found = keda_serving.broken(store)
    assert found is not None and "keda-operator.keda.svc.cluster.local:9666: connection " \
        "refused" in found, found


def test_the_certificate_names_the_metrics_service() -> None:
    """A metrics Service named otherwise than `--metrics-server-service-name` (default
    keda-metrics-apiserver) is not in the certificate: the aggregator refuses it."""
    objs = _upstream()
    for o in objs:
        if o["kind"] == "Service" and o["metadata"]["name"] == "keda-metrics-apiserver":
            o["metadata"]["name"] = "keda-operator-metrics-apiserver"
        if o["kind"] == "APIService":
            o["spec"]["service"]["name"] = "keda-operator-metrics-apiserver"
    found = keda_serving.broken(_world(*objs))
    assert found is not None and "x509: certificate is valid for" in found, found
    assert "not keda-operator-metrics-apiserver.keda.svc" in found


@pytest.mark.parametrize("leave", ["role", "binding"])
def test_the_scaler_needs_to_list_endpointslices(leave: str) -> None:
    """Forbidden EndpointSlice list -> no value (metrics_api_scaler.go: 'failed to get
    kubernetes endpoints urls from configured service URL')."""
    store = _world(*_upstream(leave=leave), *_endpoint("a"))
    ctx = _ctx(store)
    assert not keda.may_list_slices(ctx, "default")
    assert keda.external_value(ctx, asc.scaled_object(_request("a")), 0) is None


def _request(name: str) -> dict[str, Any]:
    return {"name": name, "engine": "vllm", "model": "Qwen/Qwen2.5-0.5B-Instruct",
            "instance_group": "gpu", "replicas": 1, "exposure": "service",
            "autoscaling": {"min_replicas": 1, "max_replicas": 4, "metric": "running",
                            "target": 4.0, "cooldown_seconds": 300}}


def _endpoint(name: str) -> list[dict[str, Any]]:
    """The endpoint's Deployment and Service as podplane renders them."""
    return [m for m in asc.manifests(_request(name)) if m["kind"] in ("Deployment", "Service")]


def _two_endpoints(version: str) -> Ctx:
    """Endpoints a and b in one namespace, load on b only (6 in flight)."""
    store = _world(*_upstream(version), *_endpoint("a"), *_endpoint("b"))
    engines_of(store).set_load("default", "b", 6)
    return _ctx(store)


def _unfiltered(so: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(so)
    where = out["spec"]["triggers"][0]["metadata"]
    where["valueLocation"] = where["valueLocation"].split("{")[0]
    return out


def test_keda_before_7642_reads_every_endpoint_of_the_namespace() -> None:
    """Without a label filter: KEDA 2.19 sums every Service's pods in the namespace, KEDA
    2.20 (PR #7642) only the Service's own."""
    so = _unfiltered(asc.scaled_object(_request("a")))
    assert keda.external_value(_two_endpoints("2.19.0"), so, 0) == 6.0
    assert keda.external_value(_two_endpoints("2.20.2"), so, 0) == 0.0


@pytest.mark.parametrize("version", ["2.19.0", "2.20.2"])
def test_each_endpoint_scales_on_its_own_load_whatever_the_keda(version: str) -> None:
    """podplane's ScaledObject filters on its model (`{model_name="<ep>"}`): a's value is
    a's load even when KEDA reads b's pods too."""
    ctx = _two_endpoints(version)
    assert keda.external_value(ctx, asc.scaled_object(_request("a")), 0) == 0.0
    assert keda.external_value(ctx, asc.scaled_object(_request("b")), 0) == 6.0
