"""An endpoint's autoscaling -> one KEDA ScaledObject that podplane owns (pure).

The ScaledObject carries the endpoint's name (unique per endpoint) and podplane's labels, and
targets only the endpoint's Deployment. KEDA makes the HPA `keda-hpa-<name>` from it and owns
that HPA (KEDA docs, "Scaling Deployments": ScaledObject spec, `scaleTargetRef`,
`minReplicaCount`, `maxReplicaCount`, `pollingInterval`, `advanced.horizontalPodAutoscalerConfig`
with `behavior`). Nothing else in the cluster is touched: no Prometheus configuration, no
shared scaler.

The trigger is KEDA's `metrics-api` scaler (keda.sh/docs/2.17/scalers/metrics-api): `url` of
the engine's `/metrics`, `format: prometheus` (the engines' text exposition), `valueLocation`
a metric selector naming the engine's gauge, `targetValue`, and
`aggregateFromKubeServiceEndpoints: "true"` with `aggregationType: sum`, so KEDA reads every
pod behind the Service (not one pod at random) and adds them up. With the trigger's
`metricType: AverageValue` the HPA divides that sum by the target: desired replicas =
ceil(sum / target), i.e. `target` requests per pod (Kubernetes docs, "Horizontal Pod
Autoscaling", algorithm details; external metrics with an AverageValue target).

Gauges: vLLM `vllm:num_requests_running` / `vllm:num_requests_waiting` (vLLM docs, "Production
Metrics"); SGLang `sglang:num_running_reqs` / `sglang:num_queue_reqs` (docs.sglang.ai,
"Production Metrics"; served with `--enable-metrics`, which podplane always passes). The
selector keeps only the endpoint's own samples, `{model_name="<endpoint>"}`: both engines label
their gauges with the served model name, which podplane sets to the endpoint's name
(`--served-model-name`, engines.py). KEDA before v2.20.0 listed every EndpointSlice of the
namespace, not only the Service's (kedacore/keda issue #7641, fixed by PR #7642, first released
in v2.20.0; podplane pins 2.20.2), so without the filter an endpoint would scale on every
endpoint's load under an older KEDA; a pod without a matching sample is left out of the sum
(metrics_api_scaler.go aggregateMetricsFromMultipleEndpoints).

The minimum is at least 1: with no pod there is no `/metrics` to read, so the scaler could
never wake the endpoint up (KEDA's `cooldownPeriod` concerns scaling to zero only and is left
at its default). `cooldown_seconds` is the HPA's scale-down stabilization window: the highest
recommendation of that window wins, so replicas go down only after load stayed low that long.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.errors import InvalidInput
from podplane.domain.inference.engines import ENGINES
from podplane.domain.inference.render import NAMESPACE, labels_of, render

Manifest = dict[str, Any]
API_VERSION, KIND = "keda.sh/v1alpha1", "ScaledObject"
HPA_PREFIX = "keda-hpa-"   # KEDA's default HPA name: keda-hpa-<ScaledObject name>
POLLING_SECONDS = 15       # KEDA's default pollingInterval, stated
GAUGES = {("vllm", "running"): "vllm:num_requests_running",
          ("vllm", "waiting"): "vllm:num_requests_waiting",
          ("sglang", "running"): "sglang:num_running_reqs",
          ("sglang", "waiting"): "sglang:num_queue_reqs"}


def check(spec: dict[str, Any]) -> None:
    """min <= max (the schema checks each alone)."""
    if int(spec["min_replicas"]) > int(spec["max_replicas"]):
        raise InvalidInput("autoscaling.min_replicas is above max_replicas.",
                           field="autoscaling.max_replicas",
                           hint="Set max_replicas >= min_replicas.")


def clamp(replicas: int, spec: dict[str, Any] | None) -> int:
    """The Deployment's starting replicas, inside the autoscaler's bounds."""
    if not spec:
        return replicas
    return max(int(spec["min_replicas"]), min(int(spec["max_replicas"]), replicas))


def metrics_url(name: str, engine: str) -> str:
    return f"http://{name}.{NAMESPACE}.svc.cluster.local:{ENGINES[engine].port}/metrics"


def value_location(engine: str, metric: str, name: str) -> str:
    """The gauge, filtered on the endpoint's model (a PromQL selector, as KEDA parses it)."""
    return f'{GAUGES[(engine, metric)]}{{model_name="{name}"}}'


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def scaled_object(request: dict[str, Any]) -> Manifest:
    """The endpoint's ScaledObject, from the stored request (its `autoscaling` set)."""
    spec, name, engine = request["autoscaling"], request["name"], request["engine"]
    window = int(spec.get("cooldown_seconds", 300))
    trigger = {"type": "metrics-api", "metricType": "AverageValue", "metadata": {
        "url": metrics_url(name, engine), "format": "prometheus",
        "valueLocation": value_location(engine, spec.get("metric", "running"), name),
        "targetValue": _fmt(float(spec["target"])),
        "aggregateFromKubeServiceEndpoints": "true", "aggregationType": "sum"}}
    behavior = {"scaleDown": {"stabilizationWindowSeconds": window}}
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels_of(request)},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": name},
                     "minReplicaCount": int(spec["min_replicas"]),
                     "maxReplicaCount": int(spec["max_replicas"]),
                     "pollingInterval": POLLING_SECONDS,
                     "advanced": {"horizontalPodAutoscalerConfig": {"behavior": behavior}},
                     "triggers": [trigger]}}


def manifests(request: dict[str, Any]) -> list[Manifest]:
    """Deployment, Service and, when the request autoscales, the ScaledObject last (it
    targets the Deployment)."""
    extra = [scaled_object(request)] if request.get("autoscaling") else []
    return [*render(request), *extra]


def targets(obj: dict[str, Any], name: str) -> bool:
    """Whether a ScaledObject or an HPA scales the Deployment `name`."""
    ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
    return ref.get("name") == name and ref.get("kind", "Deployment") == "Deployment"


def _holds(live: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        return isinstance(live, dict) and all(_holds(live.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (isinstance(live, list) and len(live) == len(wanted)
                and all(_holds(a, b) for a, b in zip(live, wanted, strict=True)))
    return bool(live == wanted)


def already(live: dict[str, Any] | None, wanted: Manifest) -> bool:
    """Whether the live ScaledObject already says all `wanted` says (the same request again
    changes nothing). A subset test: the API server and KEDA may add defaults to the spec."""
    return live is not None and _holds(live.get("spec"), wanted["spec"])


def summary(so: dict[str, Any], hpa: dict[str, Any] | None) -> dict[str, Any]:
    """What endpoint get shows: the bounds and trigger, and what the HPA last computed."""
    spec = so.get("spec") or {}
    meta = (spec.get("triggers") or [{}])[0].get("metadata") or {}
    window = ((((spec.get("advanced") or {}).get("horizontalPodAutoscalerConfig") or {})
               .get("behavior") or {}).get("scaleDown") or {}).get("stabilizationWindowSeconds")
    status = (hpa or {}).get("status") or {}
    current = [m.get("external", {}).get("current") or {}
               for m in status.get("currentMetrics") or []]
    value = (current[0].get("averageValue") or current[0].get("value")) if current else None
    return {"min_replicas": spec.get("minReplicaCount"),
            "max_replicas": spec.get("maxReplicaCount"), "trigger": "metrics-api",
            "metric": meta.get("valueLocation"), "target": meta.get("targetValue"),
            "cooldown_seconds": window,
            "hpa": (hpa or {}).get("metadata", {}).get("name"),
            "desired_replicas": status.get("desiredReplicas"),
            "current_metric": value}
