"""Durable endpoint mutations, each a workflow of named steps (step names are stored: never
rename):

- endpoint.create: `apply` the Deployment and the Service (server-side apply: running it again
  after a crash changes nothing), then `ready` waits until every replica is Ready (the readiness
  probe answered, so the Service routes to it) or says why not (image pull, no GPU left).
- endpoint.scale: `scale` sets the Deployment's replicas, `settled` waits until exactly that
  many pods are Ready and none is left terminating.
- endpoint.update: `apply` the new Deployment (a rolling update), then `rollout`, `smoke` and
  `rollback` (services/inference/rollout.py).
- endpoint.autoscale: `apply` podplane's ScaledObject of the endpoint, or delete it ("off").
- endpoint.delete: `delete` the ScaledObject (if podplane's), the Service and the Deployment
  (pods go with it: owner references), `gone` waits until no pod of the endpoint is left.
"""

from __future__ import annotations

import contextlib
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
from podplane.domain.inference.autoscaling import manifests as render
from podplane.domain.inference.render import NAMESPACE
from podplane.domain.inference.views import pod_ready
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud
from podplane.services.inference import autoscaling, managed, managed_ops
from podplane.services.inference import cluster as ic
from podplane.services.inference import router as rsvc
from podplane.services.inference.rollout import RolloutSteps

CREATE, SCALE, DELETE = "endpoint.create", "endpoint.scale", "endpoint.delete"
UPDATE = "endpoint.update"
POLL_SECONDS = 10.0
READY_SECONDS = 1800.0  # pulling an engine image and loading weights takes minutes
GONE_SECONDS = 600.0
Shape = dict[str, Any]


def declare(cloud: Cloud) -> list[Workflow]:
    s = EndpointSteps(cloud)
    r = RolloutSteps(s.kube)
    return [
        Workflow.of(CREATE, ("apply", s.apply), ("ready", s.ready)),
        Workflow.of(UPDATE, ("apply", s.apply), ("rollout", r.rollout), ("smoke", r.smoke),
                    ("rollback", r.rollback)),
        Workflow.of(SCALE, ("scale", s.scale), ("settled", s.ready)),
        Workflow.of(DELETE, ("delete", s.delete), ("gone", s.gone)),
        Workflow.of(autoscaling.AUTOSCALE, ("apply", s.autoscale)),
    ]


def _waiting_reasons(pods: list[Shape]) -> list[str]:
    """Why pods are not Ready, as kubelet and the scheduler said it."""
    out = []
    for p in pods:
        status = p.get("status") or {}
        for c in status.get("containerStatuses") or []:
            waiting = (c.get("state") or {}).get("waiting") or {}
            if waiting.get("reason"):
                out.append(f"{p['metadata']['name']}: {waiting['reason']}")
        for c in status.get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("status") == "False":
                out.append(f"{p['metadata']['name']}: {c.get('reason')}: {c.get('message')}")
    return out


class EndpointSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def kube(self, ctx: StepContext) -> KubePort:
        return await self.cloud.kube_for(scope.ClusterRef.of(ctx.params).eks)

    async def apply(self, ctx: StepContext) -> Shape:
        kube = await self.kube(ctx)
        await ctx.phase("applying")  # a crash point before and after the calls (crash sweep)
        manifests = [ctx.params["manifest"]] if ctx.params.get("manifest") else \
            render(ctx.params["request"])  # a managed endpoint: the operator's config
        applied = [await kube.apply(m, force=True) for m in manifests]
        ctx.crash_point("after_call")
        return {"applied": [f"{a['kind']}/{a['metadata']['name']}" for a in applied]}

    async def autoscale(self, ctx: StepContext) -> Shape:
        return await autoscaling.apply_step(await self.kube(ctx), ctx)

    async def scale(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["endpoint"]
        await ctx.phase("scaling")
        if ctx.params.get("managed"):
            await managed_ops.scale(kube, name, ctx.params["replicas"])
            ctx.crash_point("after_call")
            return {"replicas": ctx.params["replicas"]}
        await kube.patch("apps/v1", "Deployment", name,
                         {"spec": {"replicas": ctx.params["replicas"]}}, namespace=NAMESPACE)
        ctx.crash_point("after_call")
        return {"replicas": ctx.params["replicas"]}

    async def ready(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["endpoint"]
        if ctx.params.get("manifest"):
            return await managed.wait_ready(ctx, kube, name)
        if ctx.params.get("managed"):   # a managed scale: the operator's Deployment's pods
            return await managed_ops.settled(ctx, kube, name, int(ctx.params["replicas"]))
        wanted, waited = int(ctx.params["replicas"]), 0.0
        while True:
            pods = await ic.pods_of(kube, name)
            ready = [p for p in pods if pod_ready(p)]
            leaving = [p for p in pods if p["metadata"].get("deletionTimestamp")]
            if len(ready) == wanted and not leaving:
                if (ctx.params.get("request") or {}).get("router"):  # and its router serves
                    await rsvc.wait_ready(ctx, kube, name)
                return {"ready_replicas": len(ready)}
            if waited >= READY_SECONDS:
                why = "; ".join(_waiting_reasons(pods)) or "no reason reported"
                raise CloudError(f"Endpoint {name}: {len(ready)} of {wanted} replicas Ready "
                                 f"after {int(READY_SECONDS)} s ({why}).",
                                 # a decision is needed (image, GPUs): no automatic retry
                                 code="endpoint_not_ready", retryable=False,
                                 hint="Read endpoint_get for each pod; fix the image or free "
                                 "GPUs, then retry this step.")
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def delete(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["endpoint"]
        await ctx.phase("deleting")
        if ctx.params.get("managed"):
            await managed.delete(kube, name)
            ctx.crash_point("after_call")
            return {"deleted": name}
        await autoscaling.delete_ours(kube, name)  # first: KEDA stops scaling it
        for api_version, kind in (("v1", "Service"), ("apps/v1", "Deployment")):
            with contextlib.suppress(NotFound):  # already gone (a resumed step)
                await kube.delete(api_version, kind, name, namespace=NAMESPACE,
                                  propagation="Background")
        router = await rsvc.delete(kube, name)  # only what podplane made for this endpoint
        ctx.crash_point("after_call")
        return {"deleted": name, **({"router": router} if router else {})}

    async def gone(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["endpoint"]
        waited = 0.0
        while await kube.get("apps/v1", "Deployment", name, NAMESPACE) is not None or \
                await ic.pods_of(kube, name) or await rsvc.pods(kube, name):
            if waited >= GONE_SECONDS:
                raise CloudError(f"Endpoint {name} still has pods after its deletion.",
                                 code="endpoint_not_deleted", retryable=True)
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS
        return {"gone": name}
