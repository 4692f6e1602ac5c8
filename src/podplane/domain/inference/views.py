"""What an endpoint looks like to a caller, read from what Kubernetes shows: the Deployment's
spec and status, the Service, and each pod's readiness."""

from __future__ import annotations

from typing import Any

from podplane.domain.inference.engines import ENGINES
from podplane.domain.inference.render import (
    CONTAINER,
    ENGINE_LABEL,
    GROUP_ANNOTATION,
    MODEL_ANNOTATION,
)
from podplane.domain.inference.router import POLICY_ANNOTATION

Shape = dict[str, Any]


def pod_ready(pod: Shape) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    conds = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def _arg(args: list[str], *flags: str) -> str | None:
    for i, a in enumerate(args[:-1]):
        if a in flags:
            return args[i + 1]
    return None


def summary(dep: Shape, svc: Shape | None) -> Shape:
    meta, spec = dep["metadata"], dep.get("spec") or {}
    status = dep.get("status") or {}
    container = ((spec.get("template") or {}).get("spec") or {}).get("containers", [{}])[0]
    args = [str(a) for a in container.get("args") or []]
    engine = (meta.get("labels") or {}).get(ENGINE_LABEL, "")
    wanted, ready = int(spec.get("replicas", 0)), int(status.get("readyReplicas") or 0)
    tp = _arg(args, "--tensor-parallel-size", "--tp")
    pp = _arg(args, "--pipeline-parallel-size")
    length = _arg(args, "--max-model-len", "--context-length")
    return {"name": meta["name"], "kind": "self_managed", "engine": engine,
            "image": container.get("image"),
            "model": (meta.get("annotations") or {}).get(MODEL_ANNOTATION),
            "tensor_parallel": int(tp) if tp else None,
            "pipeline_parallel": int(pp) if pp else 1,
            "max_model_len": int(length) if length else None,
            "dtype": _arg(args, "--dtype"),
            "replicas": wanted, "ready_replicas": ready,
            "status": "Ready" if wanted and ready >= wanted else
            ("Stopped" if not wanted else "Progressing"),
            "exposure": "load_balancer" if (svc or {}).get("spec", {}).get("type")
            == "LoadBalancer" else "service",
            "port": ENGINES[engine].port if engine in ENGINES else None,
            "router": (meta.get("annotations") or {}).get(POLICY_ANNOTATION),
            "created_at": meta.get("creationTimestamp")}


def engine_container(template: Shape) -> Shape:
    """The engine's container in a pod (template) spec."""
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return next((c for c in containers if c.get("name") == CONTAINER), containers[0])


def request_of(dep: Shape, svc: Shape | None) -> Shape:
    """The endpoint request the Deployment was rendered from, read back (what an update
    changes and renders again)."""
    s = summary(dep, svc)
    return {"name": s["name"], "engine": s["engine"], "image": s["image"], "model": s["model"],
            "instance_group": (dep["metadata"].get("annotations") or {}).get(GROUP_ANNOTATION),
            "tensor_parallel": s["tensor_parallel"] or 1,
            "pipeline_parallel": s["pipeline_parallel"], "max_model_len": s["max_model_len"],
            "dtype": s["dtype"] or "auto", "replicas": s["replicas"], "exposure": s["exposure"],
            "router": s["router"]}


def endpoint_view(dep: Shape, svc: Shape | None, pods: list[Shape]) -> Shape:
    ingress = (((svc or {}).get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return {**summary(dep, svc),
            "service": (svc or {}).get("metadata", {}).get("name"),
            "load_balancer": (ingress[0].get("hostname") or ingress[0].get("ip"))
            if ingress else None,
            "pods": [{"name": p["metadata"]["name"],
                      "phase": (p.get("status") or {}).get("phase", "Pending"),
                      "node": (p.get("spec") or {}).get("nodeName"),
                      "ready": pod_ready(p)} for p in sorted(
                          pods, key=lambda p: str(p["metadata"]["name"]))]}
