"""What a managed endpoint looks like to a caller, read from what Kubernetes shows: the
operator's config (InferenceEndpointConfig or JumpStartModel, ../shared/crds/
hyperpod-inference: `spec`, `status.state`, `status.deploymentStatus`), the Deployment the
operator made for it and that Deployment's pods. Same keys as a self-managed endpoint's
(views.py), plus the operator's state, routing, KV cache and autoscaling."""

from __future__ import annotations

from typing import Any

from podplane.domain.inference.views import engine_container, pod_ready

Shape = dict[str, Any]
JUMPSTART_KIND = "JumpStartModel"


def model_of(config: Shape) -> str | None:
    """The `model` a create took, read back from the config."""
    spec = config.get("spec") or {}
    if config.get("kind") == JUMPSTART_KIND:
        model = spec.get("model") or {}
        version = model.get("modelVersion")
        return f"jumpstart:{model.get('modelId')}" + (f"@{version}" if version else "")
    source = spec.get("modelSourceConfig") or {}
    location = source.get("modelLocation") or ""
    if source.get("modelSourceType") == "fsx":
        return f"fsx:{location}"
    bucket = (source.get("s3Storage") or {}).get("bucketName")
    return f"s3://{bucket}/{location}" if bucket else None


def _arg(args: list[str], flag: str) -> str | None:
    return next((args[i + 1] for i, a in enumerate(args[:-1]) if a == flag), None)


def _kv_cache(spec: Shape) -> str | None:
    """off, l1, or the L2 backend (tieredstorage, redis) on top of L1."""
    kv = spec.get("kvCacheSpec")
    if kv is None:
        return None
    if kv.get("enableL2Cache"):
        return str((kv.get("l2CacheSpec") or {}).get("l2CacheBackend") or "l2").lower()
    return "l1" if kv.get("enableL1Cache", True) else "off"


def _routing(spec: Shape) -> str | None:
    routing = spec.get("intelligentRoutingSpec") or {}
    return str(routing.get("routingStrategy") or "prefixaware") if routing.get("enabled") \
        else None


def _autoscaling(spec: Shape) -> Shape | None:
    auto = spec.get("autoScalingSpec")
    if not auto:
        return None
    return {"min_replicas": auto.get("minReplicaCount"),
            "max_replicas": auto.get("maxReplicaCount"),
            "trigger": "prometheus" if auto.get("prometheusTrigger") else
            "cloudwatch" if auto.get("cloudWatchTrigger") else None}


def summary(config: Shape, dep: Shape | None) -> Shape:
    meta, spec = config["metadata"], config.get("spec") or {}
    status = config.get("status") or {}
    template = ((dep or {}).get("spec") or {}).get("template") or {}
    container = engine_container(template) if template else {}
    args = [str(a) for a in (spec.get("worker") or {}).get("args") or []]
    ready = int(((dep or {}).get("status") or {}).get("readyReplicas") or 0)
    wanted = int(spec.get("replicas", 1))
    tp = _arg(args, "--tensor-parallel-size")
    port = ((spec.get("worker") or {}).get("modelInvocationPort") or {}).get("containerPort")
    return {"name": meta["name"], "kind": "managed",
            "engine": "jumpstart" if config.get("kind") == JUMPSTART_KIND else "managed",
            "image": (spec.get("worker") or {}).get("image") or container.get("image"),
            "model": model_of(config), "tensor_parallel": int(tp) if tp else None,
            "pipeline_parallel": 1, "max_model_len": None, "dtype": None,
            "replicas": wanted, "ready_replicas": ready,
            "status": "Ready" if wanted and ready >= wanted and
            status.get("state") == "DeploymentComplete" else
            ("Stopped" if not wanted else "Progressing"),
            "state": status.get("state"),
            "exposure": "load_balancer" if spec.get("loadBalancer") is not None else "service",
            "port": int(port) if port else None, "routing": _routing(spec),
            "kv_cache": _kv_cache(spec), "autoscaling": _autoscaling(spec),
            "created_at": meta.get("creationTimestamp")}


def endpoint_view(config: Shape, dep: Shape | None, svc: Shape | None, pods: list[Shape],
                  load_balancer: str | None) -> Shape:
    conditions = (config.get("status") or {}).get("conditions") or []
    return {**summary(config, dep), "service": (svc or {}).get("metadata", {}).get("name"),
            "load_balancer": load_balancer,
            "message": conditions[-1].get("message") if conditions else None,
            "pods": [{"name": p["metadata"]["name"],
                      "phase": (p.get("status") or {}).get("phase", "Pending"),
                      "node": (p.get("spec") or {}).get("nodeName"),
                      "ready": pod_ready(p)} for p in sorted(
                          pods, key=lambda p: str(p["metadata"]["name"]))]}
