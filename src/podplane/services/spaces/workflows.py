"""Durable space mutations, each a workflow of named steps (step names are stored: never
rename):

- space.create: `token` makes the Secret holding the server's token (kept if it exists, so a
  resumed step mints no second one), `apply` the Workspace (server-side apply), `ready` waits
  until the operator reports it Available (its pod Ready behind its Service).
- space.state: `apply` sets `spec.desiredStatus`, `settled` waits for Available or Stopped.
- space.delete: `delete` the Workspace (the operator's finalizer removes its Deployment,
  Service and home claim: jupyter-k8s internal/controller/resource_manager.go
  EnsurePVCDeleted), the token Secret with it; when the home is kept, its volume is set to
  Retain first (Kubernetes docs, "Change the Reclaim Policy of a PersistentVolume"), so the
  claim's deletion leaves the volume and its files. `gone` waits until the Workspace is gone.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, Conflict, NotFound
from podplane.domain.spaces import render, views
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud
from podplane.services.spaces import cluster as sc

CREATE, STATE, DELETE = "space.create", "space.state", "space.delete"
POLL_SECONDS = 5.0
READY_SECONDS = 1200.0   # a first pull of SageMaker Distribution takes minutes
GONE_SECONDS = 600.0
Shape = dict[str, Any]


def declare(cloud: Cloud) -> list[Workflow]:
    s = SpaceSteps(cloud)
    return [Workflow.of(CREATE, ("token", s.token), ("apply", s.apply), ("ready", s.settled)),
            Workflow.of(STATE, ("apply", s.desire), ("settled", s.settled)),
            Workflow.of(DELETE, ("delete", s.delete), ("gone", s.gone))]


def home_claim(name: str) -> str:
    return f"workspace-{name}-pvc"   # jupyter-k8s GeneratePVCName


class SpaceSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def kube(self, ctx: StepContext) -> KubePort:
        return await self.cloud.kube_for(scope.ClusterRef.of(ctx.params).eks)

    async def token(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["space"]
        if await kube.get("v1", "Secret", render.token_secret(name), render.NAMESPACE):
            return {"secret": render.token_secret(name), "made": False}
        await kube.apply(render.secret(name, secrets.token_urlsafe(32)))
        ctx.crash_point("after_call")
        return {"secret": render.token_secret(name), "made": True}

    async def apply(self, ctx: StepContext) -> Shape:
        kube = await self.kube(ctx)
        await ctx.phase("applying")
        applied = await kube.apply(ctx.params["manifest"], force=True)
        ctx.crash_point("after_call")
        return {"applied": f"Workspace/{applied['metadata']['name']}"}

    async def desire(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["space"]
        await kube.patch(render.API_VERSION, render.KIND, name,
                         {"spec": {"desiredStatus": ctx.params["desired"]}},
                         namespace=render.NAMESPACE)
        ctx.crash_point("after_call")
        return {"desired": ctx.params["desired"]}

    async def settled(self, ctx: StepContext) -> Shape:
        """Until the operator says the space is what is desired; Degraded fails the step."""
        kube, name, waited = await self.kube(ctx), ctx.params["space"], 0.0
        while True:
            ws = await sc.find(kube, "", name)
            state, message = views.state_of(ws)
            if state == views.desired_of(ws):
                return {"state": state}
            if state == "Failed" or waited >= READY_SECONDS:
                raise CloudError(f"Space {name}: {state.lower()} after {int(waited)} s "
                                 f"({message or 'no reason reported'}).",
                                 code="space_not_ready", retryable=False,
                                 hint="Read space_get and its logs; fix the cause (GPUs, "
                                 "image, volume), then retry this step.")
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def delete(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["space"]
        await ctx.phase("deleting")
        kept = None if ctx.params.get("delete_home") else await _retain_home(kube, name)
        with contextlib.suppress(NotFound):   # already gone (a resumed step)
            await kube.delete(render.API_VERSION, render.KIND, name,
                              namespace=render.NAMESPACE)
        with contextlib.suppress(NotFound):
            await kube.delete("v1", "Secret", render.token_secret(name),
                              namespace=render.NAMESPACE)
        ctx.crash_point("after_call")
        return {"deleted": name, **({"home_volume_kept": kept} if kept else {})}

    async def gone(self, ctx: StepContext) -> Shape:
        kube, name, waited = await self.kube(ctx), ctx.params["space"], 0.0
        while await _exists(kube, name):
            if waited >= GONE_SECONDS:
                raise CloudError(f"Space {name} is still there after its deletion.",
                                 code="space_not_deleted", retryable=True)
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS
        return {"gone": name}


async def _exists(kube: KubePort, name: str) -> bool:
    try:
        await sc.find(kube, "", name)
    except NotFound:
        return False
    return True


async def _retain_home(kube: KubePort, name: str) -> str | None:
    """The home claim's volume, set to Retain; None when there is no bound volume."""
    claim = await kube.get("v1", "PersistentVolumeClaim", home_claim(name), render.NAMESPACE)
    volume = ((claim or {}).get("spec") or {}).get("volumeName")
    if not volume:
        return None
    try:
        await kube.patch("v1", "PersistentVolume", volume,
                         {"spec": {"persistentVolumeReclaimPolicy": "Retain"}})
    except NotFound as gone:
        raise Conflict(f"Space {name}'s home volume {volume} vanished.") from gone
    return str(volume)
