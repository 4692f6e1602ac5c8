"""Durable space mutations, each a workflow of named steps (step names are stored: never
rename):

- space.create: `token` makes the Secret holding the server's token (kept if it exists, so a
  resumed step mints no second one), `home` the space's home claim (kept if it exists: a space
  made again finds its files), `apply` the Workspace (server-side apply), `ready` waits until
  the operator reports it Available (its pod Ready behind its Service).
- space.state: `apply` sets `spec.desiredStatus`, `settled` waits for Available or Stopped.
- space.delete: `delete` the Workspace (the operator's finalizer removes its Deployment and
  Service) and the token Secret; the home claim is podplane's, not the operator's, so it stays
  unless `delete_home`. `gone` waits until the Workspace (and a deleted home) is gone.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
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
    return [Workflow.of(CREATE, ("token", s.token), ("home", s.home), ("apply", s.apply),
                        ("ready", s.settled)),
            Workflow.of(STATE, ("apply", s.desire), ("settled", s.settled)),
            Workflow.of(DELETE, ("delete", s.delete), ("gone", s.gone))]


class SpaceSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def kube(self, ctx: StepContext) -> KubePort:
        return await self.cloud.kube_for(scope.ClusterRef.of(ctx.params).eks)

    async def token(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["space"]
        if await kube.get("v1", "Secret", render.token_secret(name), render.NAMESPACE):
            return {"secret": render.token_secret(name), "made": False}
        await ctx.phase("minting")  # a crash point before and after the call (crash sweep)
        await kube.apply(render.secret(name, secrets.token_urlsafe(32)))
        ctx.crash_point("after_call")
        return {"secret": render.token_secret(name), "made": True}

    async def home(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["space"]
        claim = render.home_claim_name(name)
        if await kube.get("v1", "PersistentVolumeClaim", claim, render.NAMESPACE):
            return {"home": claim, "made": False}
        await ctx.phase("claiming")
        # home_gib: the size chosen with the template; older operations held it in the request
        gib = ctx.params.get("home_gib") or ctx.params["request"]["storage_gib"]
        await kube.apply(render.home_claim(name, int(gib)))
        ctx.crash_point("after_call")
        return {"home": claim, "made": True}

    async def apply(self, ctx: StepContext) -> Shape:
        kube = await self.kube(ctx)
        await ctx.phase("applying")
        applied = await kube.apply(ctx.params["manifest"], force=True)
        ctx.crash_point("after_call")
        return {"applied": f"Workspace/{applied['metadata']['name']}"}

    async def desire(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["space"]
        await ctx.phase("setting")
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
        gone = [(render.API_VERSION, render.KIND, name),
                ("v1", "Secret", render.token_secret(name))]
        if ctx.params.get("delete_home"):
            gone.append(("v1", "PersistentVolumeClaim", render.home_claim_name(name)))
        for api_version, kind, what in gone:
            with contextlib.suppress(NotFound):   # already gone (a resumed step)
                await kube.delete(api_version, kind, what, namespace=render.NAMESPACE)
        ctx.crash_point("after_call")
        kept = None if ctx.params.get("delete_home") else render.home_claim_name(name)
        return {"deleted": name, **({"home_kept": kept} if kept else {})}

    async def gone(self, ctx: StepContext) -> Shape:
        kube, name, waited = await self.kube(ctx), ctx.params["space"], 0.0
        while await _exists(kube, name) or (ctx.params.get("delete_home") and await kube.get(
                "v1", "PersistentVolumeClaim", render.home_claim_name(name), render.NAMESPACE)):
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
