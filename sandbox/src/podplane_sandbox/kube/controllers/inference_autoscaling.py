"""The inference operator's autoscaling: from a config's `autoScalingSpec` it makes a KEDA
ScaledObject that scales the operator's Deployment (AWS docs "Autoscaling policies for your
HyperPod inference model deployment": the operator's built-in autoscaling on CloudWatch or
Amazon Managed Prometheus metrics; the operator's chart installs KEDA as a dependency,
aws/sagemaker-hyperpod-cli helm_chart/HyperPodHelmChart/charts/inference-operator/Chart.yaml).
The ScaledObject is owned by the config (deleting the config removes it) and from then on
KEDA, not the config's `replicas`, sets the Deployment's replica count. Sources are silent on
the ScaledObject's name: the sandbox uses `<config>-scaledobject`. Only while KEDA's CRD is
installed (KEDA itself is the keda feature's, emulated elsewhere)."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.framework import Ctx, owner_ref

Obj = dict[str, Any]
SCALED_OBJECTS = "keda.sh/scaledobjects"


def name_of(config: Obj) -> str:
    return f"{config['metadata']['name']}-scaledobject"


def _trigger(spec: Obj) -> Obj | None:
    """KEDA's prometheus trigger (keda.sh docs, "Prometheus" scaler: serverAddress, query,
    threshold, activationThreshold; metricType Value or AverageValue)."""
    prom = spec.get("prometheusTrigger")
    if not prom:
        return None
    return {"type": "prometheus", "name": prom.get("name") or "prometheus",
            "metricType": "AverageValue" if prom.get("metricType", "Average") == "Average"
            else "Value",
            "metadata": {"serverAddress": prom.get("serverAddress", ""),
                         "query": prom.get("query", ""),
                         "threshold": str(prom.get("targetValue", 1)),
                         "activationThreshold": str(prom.get("activationTargetValue", 0))}}


def scaled_object(config: Obj, deployment: str) -> Obj:
    spec = config["spec"]["autoScalingSpec"]
    trigger = _trigger(spec)
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": {"name": name_of(config),
                         "namespace": config["metadata"].get("namespace", "default"),
                         "ownerReferences": [owner_ref(config)]},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": deployment},
                     "minReplicaCount": int(spec.get("minReplicaCount", 1)),
                     "maxReplicaCount": int(spec.get("maxReplicaCount", 5)),
                     "pollingInterval": int(spec.get("pollingInterval", 30)),
                     "cooldownPeriod": int(spec.get("cooldownPeriod", 300)),
                     "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {
                         "scaleDown": {"stabilizationWindowSeconds": int(
                             spec.get("scaleDownStabilizationTime", 300))},
                         "scaleUp": {"stabilizationWindowSeconds": int(
                             spec.get("scaleUpStabilizationTime", 0))}}}},
                     "triggers": [trigger] if trigger else []}}


def ensure(ctx: Ctx, config: Obj, deployment: str) -> None:
    """Create, update or delete the ScaledObject so that it follows the spec."""
    if ctx.store.registry.by_key(SCALED_OBJECTS) is None:
        return
    ns = config["metadata"].get("namespace", "default")
    found = ctx.store.find(SCALED_OBJECTS, ns, name_of(config))
    if not config["spec"].get("autoScalingSpec"):
        if found is not None and any(r.get("uid") == config["metadata"].get("uid")
                                     for r in found["metadata"].get("ownerReferences") or []):
            ctx.delete(SCALED_OBJECTS, found)
        return
    wanted = scaled_object(config, deployment)
    if found is None:
        ctx.create(SCALED_OBJECTS, wanted)
    elif found.get("spec") != wanted["spec"]:
        ctx.update(SCALED_OBJECTS, {**found, "spec": wanted["spec"]})
