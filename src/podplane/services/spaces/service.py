"""Dev spaces on a managed cluster: create, list, get, start or stop, delete. A space is the
workspace operator's Workspace (domain/spaces/render.py); every change is an operation."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from podplane.domain.effects import Effect
from podplane.domain.errors import InvalidInput
from podplane.domain.spaces import render, views
from podplane.domain.spaces import templates as tp
from podplane.domain.spaces.requests import Desired, SpaceRequest
from podplane.domain.spaces.views import SpaceView
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.inference.cluster import refuse_no_room
from podplane.services.mutation import Outcome, key_used, replay, start, unchanged_or
from podplane.services.registry import escalate_to_admin, service
from podplane.services.scope import kube_of
from podplane.services.spaces import cluster as sc
from podplane.services.spaces import templates
from podplane.services.spaces.errors import SpaceExists
from podplane.services.spaces.workflows import CREATE, DELETE, STATE

Shape = dict[str, Any]


def target(cluster: str, name: str) -> str:
    return f"cluster/{cluster}/space/{name}"


@service(Effect.READ, "space.list")
async def list_spaces(ctx: Ctx, cluster: str) -> list[SpaceView]:
    """Every Workspace in the spaces' namespace: podplane's and those made with hyp."""
    _, kube = await kube_of(ctx, cluster)
    found = [views.view(cluster, ws, await sc.pods_of(kube, ws["metadata"]["name"]))
             for ws in await sc.workspaces(kube)]
    return sorted(found, key=lambda v: v.name)


@service(Effect.READ, "space.get")
async def get_space(ctx: Ctx, cluster: str, name: str) -> SpaceView:
    _, kube = await kube_of(ctx, cluster)
    return views.view(cluster, await sc.find(kube, cluster, name), await sc.pods_of(kube, name))


@service(Effect.CREATE, "space.create",
         target=lambda cluster, request, *_a, **_k: target(cluster, request.name))
async def create_space(ctx: Ctx, cluster: str, request: SpaceRequest, *,
                       idempotency_key: str | None = None) -> Outcome:
    ref, kube = await kube_of(ctx, cluster)
    body = {k: v for k, v in asdict(request).items() if k != "dry_run"}
    params: Shape = {"cluster_ref": ref.params(), "space": request.name, "request": body}
    if await key_used(ctx, idempotency_key):   # the stored params hold what was derived
        return await replay(ctx, CREATE, target(cluster, request.name), params,
                            idempotency_key)
    await sc.require_feature(ctx, cluster)
    # the template's defaults and bounds, checked before anything is written (422 naming the
    # field and the bound, as the operator's webhook would refuse it with a 403)
    template = await templates.find(kube, cluster, request.template) \
        if request.template else None
    chosen = tp.choose(request, template)
    manifest = render.workspace(cluster, chosen)
    params |= {"manifest": manifest, "home_gib": chosen.storage_gib}
    if chosen.gpus and not chosen.instance_group:
        raise InvalidInput("A space with GPUs names its instance group.",
                           field="instance_group")
    if chosen.instance_group:
        described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
        scope.chosen_group(described, cluster, chosen.instance_group)   # 404/422 naming it
    plan: Shape = {"space": request.name, "image": chosen.image, "template": chosen.template,
                   "instance_group": chosen.instance_group, "gpus": chosen.gpus,
                   "home": f"{chosen.storage_gib}Gi at {render.HOME}",
                   "mounts": [render.HOME, *render.SHARED_CLAIMS],
                   "console_path": render.console_path(cluster, request.name),
                   "manifest": manifest}
    if await kube.get(render.API_VERSION, render.KIND, request.name, render.NAMESPACE):
        taken = SpaceExists(f"Cluster {cluster!r} has a space named {request.name!r}.",
                            hint="Choose another name, or start the existing space.")
        return await unchanged_or(taken, ctx, CREATE, target(cluster, request.name), body,
                                  {"space": request.name}, request.dry_run)
    if request.gpus and request.instance_group:
        plan["gpus_free"] = await refuse_no_room(kube, request.instance_group, request.gpus, 1)
    if request.dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, CREATE, target(cluster, request.name), params, idempotency_key,
                       plan)


@service(Effect.MUTATE, "space.state",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def set_state(ctx: Ctx, cluster: str, name: str, desired: Desired, *,
                    dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    """Start or stop a space. Stopping frees its compute and keeps its home volume."""
    ref, kube = await kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "space": name, "desired": desired}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, STATE, target(cluster, name), params, idempotency_key, {})
    ws = await sc.find(kube, cluster, name)
    now = views.desired_of(ws)
    plan: Shape = {"space": name, "from": now, "to": desired}
    if now == desired:
        return Outcome(False, plan, dry_run=dry_run)
    seen = views.view(cluster, ws, [])
    if desired == "Running" and seen.gpus and seen.instance_group:
        plan["gpus_free"] = await refuse_no_room(kube, seen.instance_group, seen.gpus, 1)
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, STATE, target(cluster, name), params, idempotency_key, plan)


@service(Effect.MUTATE, "space.delete",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def delete_space(ctx: Ctx, cluster: str, name: str, *, delete_home: bool = False,
                       confirm: bool = False, dry_run: bool = False,
                       idempotency_key: str | None = None) -> Outcome:
    """Delete a space's server; its home volume stays unless `delete_home` (a destroy:
    admin and confirm, ADR 0016)."""
    ref, kube = await kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "space": name, "delete_home": delete_home}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, DELETE, target(cluster, name), params, idempotency_key, {})
    await sc.find(kube, cluster, name)
    plan: Shape = {"space": name, "action": "delete",
                   "home": "deleted" if delete_home else "kept (a new space of this name "
                   "finds it)"}
    if delete_home:
        escalate_to_admin(ctx, "space.delete", f"Deleting space {name!r} with its home "
                          "volume destroys the files in it", confirm=confirm, dry_run=dry_run,
                          destroys=True)
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, DELETE, target(cluster, name), params, idempotency_key, plan)
