"""Durable warm-pool mutations, each a workflow of named steps (names are stored: never
rename). Every step reads the cluster again, so a resumed step does what is left:

- pool.create: `apply` the Deployment, `ready` waits until every pod is Ready.
- pool.scale: `mark` gives the free pods chosen for removal the lowest
  `controller.kubernetes.io/pod-deletion-cost` and assigned ones the highest, `scale` checks
  the choice again and lowers (or raises) the replicas, `settled` waits for exactly that many
  pods and checks that every pod assigned at `mark` is still there (the same uid).
- pool.assign: `service` applies the endpoint's Service, `label` labels free Ready pods or
  unlabels extra ones (out of the Service at once, annotated draining), `drain` waits until
  each draining pod's engine reports no request running (its `/metrics`, read through the
  API server's pod proxy) and then frees it, `ready` waits for the endpoint's Ready pods
  (pods=0: deletes the Service).
- pool.delete: `delete` the Deployment, `gone` waits until no pod of the pool is left.
"""

from __future__ import annotations

import contextlib
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
from podplane.domain.inference import pool as dp
from podplane.domain.inference.render import ENGINE_LABEL, NAMESPACE
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud

CREATE, SCALE, ASSIGN, DELETE = "pool.create", "pool.scale", "pool.assign", "pool.delete"
POLL_SECONDS = 5.0
READY_SECONDS = 1800.0
# How long a drain waits for the requests in flight to finish: longer than any completion
# podplane's own smoke or invoke asks for; past it the step fails and can be retried.
DRAIN_SECONDS = 900.0
Shape = dict[str, Any]


def declare(cloud: Cloud) -> list[Workflow]:
    s = PoolSteps(cloud)
    return [
        Workflow.of(CREATE, ("apply", s.apply), ("ready", s.ready)),
        Workflow.of(SCALE, ("mark", s.mark), ("scale", s.scale), ("settled", s.ready)),
        Workflow.of(ASSIGN, ("service", s.service), ("label", s.label), ("drain", s.drain),
                    ("ready", s.assigned_ready)),
        Workflow.of(DELETE, ("delete", s.delete), ("gone", s.gone)),
    ]


async def pods_of(kube: KubePort, pool: str) -> list[Shape]:
    return await kube.list("v1", "Pod", namespace=NAMESPACE, labels={dp.POOL_LABEL: pool})


async def running_on(kube: KubePort, pod: Shape) -> float | None:
    """The requests in flight on one pod, from its engine's own gauge (None: unreadable)."""
    container = pod["spec"]["containers"][0]
    port = next((p["containerPort"] for p in container.get("ports") or []), 8000)
    engine = (pod["metadata"].get("labels") or {}).get(ENGINE_LABEL, "vllm")
    status, text = await kube.proxy("GET", NAMESPACE, pod["metadata"]["name"], port,
                                    "metrics", resource="pods")
    return dp.running_requests(str(text), engine) if status == 200 else None


def _uids(pods: list[Shape]) -> dict[str, str]:
    return {p["metadata"]["uid"]: p["metadata"]["name"] for p in pods}


class PoolSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def kube(self, ctx: StepContext) -> KubePort:
        return await self.cloud.kube_for(scope.ClusterRef.of(ctx.params).eks)

    async def _annotate(self, kube: KubePort, pod: Shape, notes: dict[str, Any],
                        labels: dict[str, Any] | None = None) -> None:
        meta: Shape = {"annotations": notes, **({"labels": labels} if labels else {})}
        await kube.patch("v1", "Pod", pod["metadata"]["name"], {"metadata": meta},
                         namespace=NAMESPACE)

    async def apply(self, ctx: StepContext) -> Shape:
        kube = await self.kube(ctx)
        await ctx.phase("applying")
        applied = await kube.apply(dp.pool_deployment(ctx.params["request"]), force=True)
        ctx.crash_point("after_call")
        return {"applied": f"Deployment/{applied['metadata']['name']}"}

    async def ready(self, ctx: StepContext) -> Shape:
        """Exactly `replicas` pods, all Ready, none leaving; every pod assigned at `mark` is
        still one of them."""
        kube, pool = await self.kube(ctx), ctx.params["pool"]
        wanted, waited = int(ctx.params["replicas"]), 0.0
        kept = (ctx.results.get("kept") or {})
        while True:
            pods = await pods_of(kube, pool)
            staying = [p for p in pods if not dp.leaving(p)]
            lost = sorted(n for uid, n in kept.items() if uid not in _uids(staying))
            if lost:
                raise CloudError(f"Pool {pool}: the assigned pod(s) {', '.join(lost)} were "
                                 "removed by the scale-in.", code="pool_lost_assigned_pod",
                                 retryable=False, hint="Report this: podplane chose others.")
            if len(staying) == wanted == sum(1 for p in staying if dp.ready(p)) and \
                    len(pods) == wanted:
                return {"ready": wanted, "pods": sorted(_uids(staying).values())}
            if waited >= READY_SECONDS:
                raise CloudError(f"Pool {pool}: {len(staying)} pod(s), "
                                 f"{sum(1 for p in staying if dp.ready(p))} Ready, of "
                                 f"{wanted} after {int(READY_SECONDS)} s.",
                                 code="pool_not_ready", retryable=False,
                                 hint="Read the pool's pods (GET .../pools/{name}).")
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def mark(self, ctx: StepContext) -> Shape:
        kube, pool = await self.kube(ctx), ctx.params["pool"]
        pods = [p for p in await pods_of(kube, pool) if not dp.leaving(p)]
        remove = len(pods) - int(ctx.params["replicas"])
        busy = [p for p in pods if not dp.is_free(p)]
        victims = dp.scale_in_plan(pods, pool, remove) if remove > 0 else []
        await ctx.phase("marking")
        for p in busy:
            await self._annotate(kube, p, {dp.DELETION_COST: str(dp.ASSIGNED_COST)})
        for p in victims:
            await self._annotate(kube, p, {dp.DELETION_COST: str(dp.VICTIM_COST)})
        ctx.crash_point("after_call")
        return {"kept": _uids(busy), "victims": _uids(victims)}

    async def scale(self, ctx: StepContext) -> Shape:
        kube, pool = await self.kube(ctx), ctx.params["pool"]
        pods = [p for p in await pods_of(kube, pool) if not dp.leaving(p)]
        victims = [p for p in pods if p["metadata"]["uid"] in (ctx.results.get("victims") or {})]
        if victims and (not all(dp.is_free(p) for p in victims) or dp.unsafe(pods, victims)):
            raise CloudError(f"Pool {pool} changed since its scale-in was planned.",
                             code="pool_changed", retryable=False,
                             hint="Scale again: a new plan chooses free pods again.")
        await ctx.phase("scaling")
        await kube.patch("apps/v1", "Deployment", pool,
                         {"spec": {"replicas": ctx.params["replicas"]}}, namespace=NAMESPACE)
        ctx.crash_point("after_call")
        return {"replicas": ctx.params["replicas"]}

    async def service(self, ctx: StepContext) -> Shape:
        kube, pool, endpoint = await self.kube(ctx), ctx.params["pool"], ctx.params["endpoint"]
        if int(ctx.params["pods"]) == 0:
            return {"service": None}
        dep = await kube.get("apps/v1", "Deployment", pool, NAMESPACE)
        if dep is None:
            raise NotFound(f"Pool {pool} is gone.")
        await ctx.phase("applying")
        await kube.apply(dp.endpoint_service(dep, endpoint), force=True)
        ctx.crash_point("after_call")
        return {"service": endpoint}

    async def label(self, ctx: StepContext) -> Shape:
        kube, pool, endpoint = await self.kube(ctx), ctx.params["pool"], ctx.params["endpoint"]
        wanted = int(ctx.params["pods"])
        pods = [p for p in await pods_of(kube, pool) if not dp.leaving(p)]
        mine = sorted((p for p in pods if dp.assigned_to(p) == endpoint),
                      key=lambda p: (dp.ready(p), str(p["metadata"]["name"])))
        free = sorted((p for p in pods if dp.is_free(p) and dp.ready(p)),
                      key=lambda p: str(p["metadata"]["name"]))
        await ctx.phase("labelling")
        added, removed = free[:max(0, wanted - len(mine))], mine[:max(0, len(mine) - wanted)]
        for p in added:
            await self._annotate(kube, p, {dp.DELETION_COST: str(dp.ASSIGNED_COST)},
                                 {dp.ASSIGNED_LABEL: endpoint})
        for p in removed:  # out of the Service now; freed once drained
            await self._annotate(kube, p, {dp.DRAINING: endpoint}, {dp.ASSIGNED_LABEL: None})
        ctx.crash_point("after_call")
        return {"assigned": _uids(added), "unassigned": _uids(removed)}

    async def drain(self, ctx: StepContext) -> Shape:
        """Each pod draining from this endpoint: two readings of its running-requests gauge,
        POLL_SECONDS apart, both 0 (a request routed just before the label went may still be
        arriving), then it is free again."""
        kube, pool, endpoint = await self.kube(ctx), ctx.params["pool"], ctx.params["endpoint"]
        drained: list[Shape] = []
        waited = 0.0
        while True:
            pods = [p for p in await pods_of(kube, pool)
                    if dp.draining(p) == endpoint and not dp.leaving(p)]
            if not pods:
                return {"drained": drained, "waited_seconds": waited}
            for p in pods:
                seen = await running_on(kube, p)
                record = next((d for d in drained if d["uid"] == p["metadata"]["uid"]), None)
                if record is None:
                    record = {"pod": p["metadata"]["name"], "uid": p["metadata"]["uid"],
                              "max_running": 0.0, "idle_readings": 0}
                    drained.append(record)
                record["max_running"] = max(record["max_running"], seen or 0.0)
                record["idle_readings"] = record["idle_readings"] + 1 if seen == 0 else 0
                if record["idle_readings"] >= 2:
                    await self._annotate(kube, p, {dp.DRAINING: None, dp.DELETION_COST: None})
                    record["drained_after_seconds"] = waited
            if waited >= DRAIN_SECONDS:
                raise CloudError(f"Pool {pool}: {', '.join(p['metadata']['name'] for p in pods)}"
                                 f" still run requests after {int(DRAIN_SECONDS)} s.",
                                 code="pool_drain_timeout", retryable=True,
                                 hint="Retry the operation: the drain goes on where it was.")
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def assigned_ready(self, ctx: StepContext) -> Shape:
        kube, pool, endpoint = await self.kube(ctx), ctx.params["pool"], ctx.params["endpoint"]
        wanted, waited = int(ctx.params["pods"]), 0.0
        if wanted == 0:
            await ctx.phase("deleting")
            with contextlib.suppress(NotFound):
                await kube.delete("v1", "Service", endpoint, namespace=NAMESPACE)
            return {"serving": 0}
        while True:
            pods = await pods_of(kube, pool)
            serving = [p for p in pods if dp.assigned_to(p) == endpoint and dp.ready(p)]
            if len(serving) >= wanted:
                return {"serving": len(serving)}
            if waited >= READY_SECONDS:
                raise CloudError(f"Endpoint {endpoint}: {len(serving)} of {wanted} pool pods "
                                 "Ready.", code="endpoint_not_ready", retryable=True)
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def delete(self, ctx: StepContext) -> Shape:
        kube, pool = await self.kube(ctx), ctx.params["pool"]
        await ctx.phase("deleting")
        with contextlib.suppress(NotFound):
            await kube.delete("apps/v1", "Deployment", pool, namespace=NAMESPACE,
                              propagation="Background")
        ctx.crash_point("after_call")
        return {"deleted": pool}

    async def gone(self, ctx: StepContext) -> Shape:
        kube, pool, waited = await self.kube(ctx), ctx.params["pool"], 0.0
        while await kube.get("apps/v1", "Deployment", pool, NAMESPACE) is not None or \
                await pods_of(kube, pool):
            if waited >= READY_SECONDS:
                raise CloudError(f"Pool {pool} still has pods after its deletion.",
                                 code="pool_not_deleted", retryable=True)
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS
        return {"gone": pool}
