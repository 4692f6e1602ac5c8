"""A warm pool: engine pods that load one model once and serve whichever endpoint they are
assigned to, reassigned by a label (docs/adr/0010-warm-pool.md).

- The pool is a Deployment named after the pool; its pods carry `podplane.io/pool=<pool>` and
  serve the model under the pool's name (the engine's `--served-model-name`).
- An endpoint on the pool is a Service whose selector is `podplane.io/pool=<pool>` and
  `podplane.io/assigned=<endpoint>`: labelling a Ready pod puts it behind the Service at once
  (no pod starts); removing the label takes it out (the EndpointSlice controller drops pods
  the selector no longer matches; Kubernetes docs, "Service", Services with selectors).
- Scale-in removes free pods only. The ReplicaSet picks its own victims
  (kubernetes/kubernetes pkg/controller/replicaset `getPodsToDelete`, ordered by
  pkg/controller/controller_utils.go `ActivePodsWithRanks`): unscheduled, then Pending, then
  not Ready pods first, then the lower `controller.kubernetes.io/pod-deletion-cost`
  (Kubernetes docs, "ReplicaSet", Pod deletion cost). podplane gives chosen victims the lowest
  cost and assigned pods the highest, and refuses a plan whose first victims in that order
  would not be exactly the chosen ones (an assigned pod that is not Ready ranks before a Ready
  free pod whatever its cost).
"""

from __future__ import annotations

from typing import Any

from podplane.domain.inference.errors import PoolPodsAssigned, PoolScaleUnsafe
from podplane.domain.inference.render import (
    COMPONENT,
    CONTAINER,
    ENGINE_LABEL,
    GROUP_ANNOTATION,
    MODEL_ANNOTATION,
    NAMESPACE,
    PORT_NAME,
    deployment,
)
from podplane.domain.jobs.kinds import MANAGED_BY

Manifest = dict[str, Any]
POOL_LABEL = "podplane.io/pool"
ASSIGNED_LABEL = "podplane.io/assigned"
DRAINING = "podplane.io/draining"  # annotation: unassigned from this endpoint, draining
SERVED_MODEL = "podplane.io/served-model"  # annotation on an endpoint's Service
POOL_COMPONENT = "warm-pool"
ENDPOINT_COMPONENT = "warm-pool-endpoint"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
VICTIM_COST, ASSIGNED_COST = -1000, 1000  # int32 values; free pods keep the default 0
PHASES = {"Pending": 0, "Unknown": 1, "Running": 2}
# The engine's requests-in-flight gauge (vLLM and SGLang docs, "Production Metrics").
RUNNING_METRIC = {"vllm": "vllm:num_requests_running", "sglang": "sglang:num_running_reqs"}


def labels(pool: str, engine: str) -> dict[str, str]:
    return {MANAGED_BY: "podplane", COMPONENT: POOL_COMPONENT, POOL_LABEL: pool,
            ENGINE_LABEL: engine}


def pool_deployment(request: dict[str, Any]) -> Manifest:
    """The endpoint Deployment's pod (same engine, image, GPUs, probe, affinity), serving the
    model under the pool's name, labelled as the pool's."""
    dep = deployment(request)
    mine = labels(request["name"], request["engine"])
    dep["metadata"]["labels"] = dict(mine)
    dep["spec"]["selector"] = {"matchLabels": {POOL_LABEL: request["name"]}}
    dep["spec"]["template"]["metadata"]["labels"] = dict(mine)
    # No preStop sleep: the pool never deletes a pod that serves (assignment drains it first,
    # scale-in removes free pods only), so the hook would only hold a free GPU longer.
    pod = dep["spec"]["template"]["spec"]
    pod.pop("terminationGracePeriodSeconds", None)
    for c in pod["containers"]:
        c.pop("lifecycle", None)
    return dep


def endpoint_service(pool: Manifest, endpoint: str) -> Manifest:
    """The Service of an endpoint on the pool: its selector is the assignment label."""
    meta = pool["metadata"]
    name, engine = meta["name"], (meta.get("labels") or {}).get(ENGINE_LABEL, "vllm")
    container = next(c for c in pool["spec"]["template"]["spec"]["containers"]
                     if c["name"] == CONTAINER)
    port = next(p["containerPort"] for p in container["ports"] if p["name"] == PORT_NAME)
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": endpoint, "namespace": NAMESPACE,
                         "labels": {MANAGED_BY: "podplane", COMPONENT: ENDPOINT_COMPONENT,
                                    POOL_LABEL: name, ENGINE_LABEL: engine},
                         "annotations": {SERVED_MODEL: name}},
            "spec": {"type": "ClusterIP",
                     "selector": {POOL_LABEL: name, ASSIGNED_LABEL: endpoint},
                     "ports": [{"name": PORT_NAME, "port": port, "targetPort": PORT_NAME,
                                "protocol": "TCP"}]}}


def assigned_to(pod: Manifest) -> str | None:
    return (pod["metadata"].get("labels") or {}).get(ASSIGNED_LABEL)


def draining(pod: Manifest) -> str | None:
    return (pod["metadata"].get("annotations") or {}).get(DRAINING)


def leaving(pod: Manifest) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_free(pod: Manifest) -> bool:
    """Neither assigned nor draining nor being deleted: the only pods scale-in may remove."""
    return not (assigned_to(pod) or draining(pod) or leaving(pod))


def ready(pod: Manifest) -> bool:
    conds = (pod.get("status") or {}).get("conditions") or []
    return not leaving(pod) and any(c.get("type") == "Ready" and c.get("status") == "True"
                                    for c in conds)


def _cost(pod: Manifest) -> int:
    try:
        return int((pod["metadata"].get("annotations") or {}).get(DELETION_COST, 0))
    except ValueError:
        return 0


def _first_rules(pod: Manifest) -> tuple[int, int, int, int]:
    """The leading rules of kube's order, which come before any tie-breaking by node, age or
    uid: scheduled, phase, Ready, deletion cost (lower sorts first = removed first)."""
    return (1 if (pod.get("spec") or {}).get("nodeName") else 0,
            PHASES.get((pod.get("status") or {}).get("phase") or "", -1),
            1 if ready(pod) else 0, _cost(pod))


def choose_victims(pods: list[Manifest], count: int) -> list[Manifest]:
    """The `count` free pods to remove: those kube would remove first among the free ones."""
    free = sorted((p for p in pods if is_free(p)),
                  key=lambda p: (*_first_rules(p), str(p["metadata"]["name"])))
    return free[:count]


def with_costs(pods: list[Manifest], victims: list[Manifest]) -> list[Manifest]:
    """The pods as they will be once podplane set the deletion costs."""
    chosen = {v["metadata"]["uid"] for v in victims}
    out = []
    for p in pods:
        cost = VICTIM_COST if p["metadata"]["uid"] in chosen else \
            ASSIGNED_COST if not is_free(p) else _cost(p)
        notes = {**(p["metadata"].get("annotations") or {}), DELETION_COST: str(cost)}
        out.append({**p, "metadata": {**p["metadata"], "annotations": notes}})
    return out


def unsafe(pods: list[Manifest], victims: list[Manifest]) -> list[str]:
    """The pods that kube's order could remove instead of a chosen victim (empty: safe).
    Every victim must sort strictly before every other pod on the leading rules, since the
    rules after them (node, age, uid) are not podplane's to choose."""
    staying = [p for p in with_costs(pods, victims) if not leaving(p)
               and p["metadata"]["uid"] not in {v["metadata"]["uid"] for v in victims}]
    if not victims:
        return []
    worst = max(_first_rules(v) for v in with_costs(victims, victims))
    return sorted(str(p["metadata"]["name"]) for p in staying if _first_rules(p) <= worst)


def running_requests(metrics_text: str, engine: str) -> float | None:
    """The engine's requests-in-flight gauge, summed over its label sets, from Prometheus text
    (Prometheus docs, "Exposition formats"); None when the engine does not publish it."""
    name, total, seen = RUNNING_METRIC.get(engine, RUNNING_METRIC["vllm"]), 0.0, False
    for line in metrics_text.splitlines():
        if line.startswith(name) and line[len(name):len(name) + 1] in ("{", " "):
            try:
                total += float(line.rsplit(" ", 1)[1])
                seen = True
            except (IndexError, ValueError):
                continue
    return total if seen else None


def pool_summary(dep: Manifest, pods: list[Manifest]) -> dict[str, Any]:
    meta, spec = dep["metadata"], dep.get("spec") or {}
    container = spec["template"]["spec"]["containers"][0]
    staying = [p for p in pods if not leaving(p)]
    return {"name": meta["name"], "engine": (meta.get("labels") or {}).get(ENGINE_LABEL),
            "image": container.get("image"),
            "model": (meta.get("annotations") or {}).get(MODEL_ANNOTATION),
            "instance_group": (meta.get("annotations") or {}).get(GROUP_ANNOTATION),
            "replicas": int(spec.get("replicas", 0)),
            "ready": sum(1 for p in staying if ready(p)),
            "free": sum(1 for p in staying if is_free(p)),
            "assigned": sorted({a for p in staying if (a := assigned_to(p))}),
            "pods": [{"name": p["metadata"]["name"], "uid": p["metadata"]["uid"],
                      "ready": ready(p), "node": (p.get("spec") or {}).get("nodeName"),
                      "assigned": assigned_to(p), "draining": draining(p),
                      "leaving": leaving(p)}
                     for p in sorted(pods, key=lambda p: str(p["metadata"]["name"]))]}


def scale_in_plan(pods: list[Manifest], name: str, remove: int) -> list[Manifest]:
    """The free pods to remove, or the 409 that says why none can be chosen safely."""
    staying = [p for p in pods if not leaving(p)]
    victims = choose_victims(staying, remove)
    if len(victims) < remove:
        busy = sorted(f"{p['metadata']['name']} ({assigned_to(p) or 'draining'})"
                      for p in staying if not is_free(p))
        raise PoolPodsAssigned(
            f"Scaling pool {name!r} in by {remove} would remove a pod that is assigned or "
            f"draining: only {len(victims)} pod(s) are free; busy: {', '.join(busy)}.",
            hint="Unassign an endpoint first (POST .../assign with fewer pods: it drains "
            "the pod), then scale in.")
    risky = unsafe(staying, victims)
    if risky:
        raise PoolScaleUnsafe(
            f"Kubernetes removes unscheduled, Pending and not Ready pods first, so it could "
            f"remove {', '.join(risky)} instead of the free pod(s) podplane chose.",
            hint="Wait until the pool's assigned pods are Ready, then scale in.")
    return victims
