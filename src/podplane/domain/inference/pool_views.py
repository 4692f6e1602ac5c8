"""An endpoint on a warm pool as endpoint list and get show it: the pool's Deployment gives the
engine, image, model and parallelism; the endpoint's own Service and the pool pods assigned to
it (label `podplane.io/assigned=<endpoint>`) give its replicas. It has no Deployment of its
own, so `pool` names where its pods come from (scale it with the pool's assign)."""

from __future__ import annotations

from typing import Any

from podplane.domain.inference import views
from podplane.domain.inference.pool import POOL_LABEL, assigned_to, leaving, ready

Shape = dict[str, Any]


def pool_of(svc: Shape) -> str | None:
    """The pool an endpoint Service selects (its selector and label carry it)."""
    return ((svc["metadata"].get("labels") or {}).get(POOL_LABEL)
            or ((svc.get("spec") or {}).get("selector") or {}).get(POOL_LABEL))


def serving(svc: Shape, pods: list[Shape]) -> list[Shape]:
    """The pool's pods assigned to this endpoint that are staying."""
    name = svc["metadata"]["name"]
    return [p for p in pods if assigned_to(p) == name and not leaving(p)]


def endpoint_summary(pool: Shape, svc: Shape, pods: list[Shape]) -> Shape:
    mine = serving(svc, pods)
    wanted, up = len(mine), sum(1 for p in mine if ready(p))
    shown = views.summary(pool, svc)
    return {**shown, "name": svc["metadata"]["name"], "replicas": wanted,
            "ready_replicas": up,
            "status": "Ready" if wanted and up >= wanted else
            ("Stopped" if not wanted else "Progressing"),
            "router": None, "created_at": svc["metadata"].get("creationTimestamp"),
            "pool": pool["metadata"]["name"]}


def endpoint_view(pool: Shape, svc: Shape, pods: list[Shape]) -> Shape:
    """endpoint get: the summary, its Service and the pool pods serving it."""
    shown = views.endpoint_view(pool, svc, serving(svc, pods))
    return {**shown, **endpoint_summary(pool, svc, pods), "autoscaling": None,
            "router_pods": []}
