"""Inference endpoints on a managed cluster (self-managed vLLM/SGLang): create (GPUs checked
against the instance type), list, get, scale, delete, and invoke through the API server's
service proxy."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from podplane.cloud.ports_kube import KubePort
from podplane.domain.catalog import lookup
from podplane.domain.effects import Effect, Role
from podplane.domain.errors import CloudError, ConfirmationRequired, InvalidInput, NotFound
from podplane.domain.inference import autoscaling as asc
from podplane.domain.inference import invoke, managed_options, views
from podplane.domain.inference import managed_sources as sources
from podplane.domain.inference import render as ir
from podplane.domain.inference import router as router_of
from podplane.domain.inference.engines import ENGINES
from podplane.domain.inference.errors import EndpointExists, EndpointOnPool, EndpointUnavailable
from podplane.domain.inference.images import check_registry
from podplane.domain.inference.pool import SERVED_MODEL
from podplane.domain.inference.pool_views import pool_of
from podplane.domain.inference.requests import MAX_REPLICAS, EndpointRequest, EndpointUpdate
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.inference import autoscaling as autoscale
from podplane.services.inference import cluster as ic
from podplane.services.inference import (
    managed,
    managed_ops,
    managed_room,
    managed_update,
    pool,
)
from podplane.services.inference import router as rsvc
from podplane.services.inference.workflows import CREATE, DELETE, SCALE, UPDATE
from podplane.services.mutation import Outcome, key_used, replay, start, unchanged_or
from podplane.services.registry import escalate_to_admin, service
from podplane.services.scope import kube_of

Shape = dict[str, Any]
MAX_PROMPT = 4000


@dataclass(frozen=True, kw_only=True)
class InvokeRequest:
    """A small test request to the endpoint's OpenAI-compatible API."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    prompt: Annotated[str, Field(min_length=1, max_length=MAX_PROMPT,
                                 description="Prompt, or the user message with chat.")]
    max_tokens: Annotated[int, Field(ge=1, le=256, description="Tokens to generate.")] = 16
    chat: Annotated[bool, Field(description="Chat completion.")] = False


def target(cluster: str, name: str) -> str:
    return f"cluster/{cluster}/endpoint/{name}"


@service(Effect.READ, "endpoint.list")
async def list_endpoints(ctx: Ctx, cluster: str) -> list[Shape]:
    _, kube = await kube_of(ctx, cluster)
    services = await ic.services_by_name(kube)
    found = [views.summary(d, services.get(d["metadata"]["name"]))
             for d in await ic.deployments(kube)] + await managed_ops.summaries(kube) \
        + await pool.endpoint_summaries(kube)
    return sorted(found, key=lambda s: s["name"])


@service(Effect.READ, "endpoint.get")
async def get_endpoint(ctx: Ctx, cluster: str, name: str) -> Shape:
    _, kube = await kube_of(ctx, cluster)
    if (seen := await managed_ops.view(kube, name) or await pool.endpoint_view(kube, name)):
        return seen
    dep, svc = await ic.find(kube, cluster, name)
    shown = views.endpoint_view(dep, svc, await ic.pods_of(kube, name))
    return {**shown, "autoscaling": await autoscale.view(kube, name),
            "router_pods": await rsvc.view(kube, name, shown["router"])}


async def _own(kube: KubePort, cluster: str, name: str) -> tuple[Shape, Shape | None]:
    """The endpoint's own Deployment and Service. An endpoint on a warm pool has neither: a
    409 says to change it through its pool."""
    if (svc := await pool.endpoint_service(kube, name)) is not None:
        served_by = pool_of(svc)
        raise EndpointOnPool(f"Endpoint {name!r} is served by warm pool {served_by!r}; it has "
                             "no Deployment of its own to scale, update or delete.",
                             hint=f"Change its pods with POST .../pools/{served_by}/assign "
                             "(pool_assign); pods=0 removes it.")
    return await ic.find(kube, cluster, name)


@service(Effect.CREATE, "endpoint.create",
         target=lambda cluster, request, *_a, **_k: target(cluster, request.name))
async def create_endpoint(ctx: Ctx, cluster: str, request: EndpointRequest, *,
                          idempotency_key: str | None = None) -> Outcome:
    ref, kube = await kube_of(ctx, cluster)
    check_registry(request.image, ctx.app.settings.allowed_image_registries)
    body = {k: v for k, v in asdict(request).items() if k not in ("dry_run", "confirm")}
    if ir.check_exposure(body):   # internal unless an admin agreed (issue 34, S6)
        escalate_to_admin(ctx, "endpoint.create", f"Endpoint {request.name!r} would be "
                          f"reachable from the internet ({', '.join(request.source_ranges)})",
                          confirm=request.confirm, dry_run=request.dry_run)
    body["image"] = request.image or ENGINES[request.engine].image
    body["replicas"] = asc.clamp(request.replicas, body.get("autoscaling"))
    op_params: Shape = {"cluster_ref": ref.params(), "endpoint": request.name,
                        "replicas": body["replicas"], "request": body}  # within min..max
    if await key_used(ctx, idempotency_key):  # a replay returns its operation
        return await replay(ctx, CREATE, target(cluster, request.name), op_params,
                            idempotency_key)
    router_of.check(body)  # 422 naming `router` (vLLM or managed)
    sources.refuse_eula_elsewhere(request.model, request.accept_eula)
    instance_type = await _instance_type(ctx, ref, cluster, body)
    manifests: list[Shape]
    if request.kind == "managed":  # the operator's config (409 while the feature is off)
        op_params["manifest"] = await managed.render_for(ctx, ref, kube, cluster, body)
        manifests = [op_params["manifest"]]
    else:
        managed_options.check(body)  # routing and KV cache are the operator's (422 here)
        manifests = asc.manifests(body)  # refuses what the engine cannot (422 naming a field)
    try:
        await _refuse_taken(kube, cluster, request.name)
    except EndpointExists as taken:
        return await unchanged_or(taken, ctx, CREATE, target(cluster, request.name), body,
                                  {"endpoint": request.name}, request.dry_run)
    if request.autoscaling is not None:
        await autoscale.allowed(ctx, kube, cluster, body)
    if request.router:
        await rsvc.refuse_taken(kube, cluster, request.name)
    gpus = ir.gpus_per_pod(body)
    free = await ic.refuse_no_room(kube, request.instance_group, gpus, body["replicas"])
    warnings = await ic.room_warning(kube, request.instance_group, gpus, int(
        request.autoscaling.max_replicas)) if request.autoscaling else []
    plan = {"endpoint": request.name, "engine": request.engine, "image": body["image"],
            "instance_group": request.instance_group,
            "instance_type": instance_type.name if instance_type else None,
            "gpus_per_node": instance_type.gpu_count if instance_type else None,
            "replicas": body["replicas"], "gpus_requested": body["replicas"] * gpus,
            "gpus_free": free,
            "exposure": request.exposure, "kind": request.kind, "router": request.router,
            "manifests": manifests, **({"warnings": warnings} if warnings else {})}
    if request.dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, CREATE, target(cluster, request.name), op_params, idempotency_key,
                       plan)


async def _instance_type(ctx: Ctx, ref: Any, cluster: str, body: Shape) -> Any:
    """The group's instance type; refuses a request whose GPUs per pod do not fit one node."""
    described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
    group = scope.chosen_group(described, cluster, body["instance_group"])
    instance_type = lookup(str(group.get("InstanceType", "")))
    ir.check_fits(body, instance_type)
    return instance_type


async def _refuse_taken(kube: Any, cluster: str, name: str) -> None:
    """Any Deployment or Service of that name, ours or not: podplane never overwrites one."""
    for api_version, kind in (("apps/v1", "Deployment"), ("v1", "Service")):
        if await kube.get(api_version, kind, name, ir.NAMESPACE) is not None:
            raise EndpointExists(f"A {kind} named {name!r} already exists on {cluster!r}.",
                                 hint="Choose another name, or delete the old endpoint.")


@service(Effect.MUTATE, "endpoint.scale",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def scale_endpoint(ctx: Ctx, cluster: str, name: str, replicas: int, *,
                         dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    if not 0 <= replicas <= MAX_REPLICAS:
        raise InvalidInput(f"replicas must be 0..{MAX_REPLICAS}.", field="replicas")
    ref, kube = await kube_of(ctx, cluster)
    params = {"cluster_ref": ref.params(), "endpoint": name, "replicas": replicas}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, SCALE, target(cluster, name), params, idempotency_key, {})
    room: Callable[[int], Awaitable[int]] | None = None
    if (config := await managed.config_of(kube, name)) is not None:
        params["managed"] = True   # the operator's config (its pods are placed by it)
        current = managed_room.replicas_of(config)   # 409 while the operator autoscales it
        room = partial(managed_room.refuse_no_room, kube, config)
    else:
        dep, _ = await _own(kube, cluster, name)
        await autoscale.refuse_manual_scale(kube, name)
        current = int((dep.get("spec") or {}).get("replicas", 0))
        if group := (dep["metadata"].get("annotations") or {}).get(ir.GROUP_ANNOTATION):
            room = partial(ic.refuse_no_room, kube, group,
                           ir.gpus_per_pod(views.request_of(dep, None)))
    plan = {"endpoint": name, "from": current, "to": replicas}
    if current == replicas:
        return Outcome(False, plan)
    if replicas > current and room is not None:
        plan["gpus_free"] = await room(replicas - current)
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, SCALE, target(cluster, name), params, idempotency_key, plan)


@service(Effect.MUTATE, "endpoint.update",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def update_endpoint(ctx: Ctx, cluster: str, name: str, update: EndpointUpdate, *,
                          idempotency_key: str | None = None) -> Outcome:
    """Change the pod template (image, model, parallelism, context length, dtype): a rolling
    update, then one real request; either failing rolls back. Same values: no change."""
    check_registry(update.image, ctx.app.settings.allowed_image_registries)
    ref, kube = await kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "endpoint": name}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, UPDATE, target(cluster, name), params, idempotency_key, {})
    if (config := await managed.config_of(kube, name)) is not None:
        told, extra = await managed_update.plan(ctx, kube, cluster, config, update)
        if not extra or update.dry_run:
            return Outcome(bool(extra), told, dry_run=update.dry_run)
        return await start(ctx, UPDATE, target(cluster, name), {**params, **extra},
                           idempotency_key, told)
    dep, svc = await _own(kube, cluster, name)
    if update.autoscaling is not None:
        return await autoscale.autoscale_endpoint(ctx, cluster, name, update, idempotency_key)
    current = views.request_of(dep, svc)
    changes = {k: v for k, v in update.changes().items() if v != current.get(k)}
    plan: Shape = {"endpoint": name,
                   "changes": {k: {"from": current.get(k), "to": v} for k, v in changes.items()}}
    if not changes:
        return Outcome(False, plan, dry_run=update.dry_run)
    wanted = {**current, **changes}
    await _instance_type(ctx, ref, cluster, wanted)
    manifest = ir.render(wanted)[0]  # refuses what the engine cannot do (422 naming the field)
    if current["replicas"]:  # the rollout starts one new pod before it stops an old one
        plan["gpus_free"] = await ic.refuse_no_room(kube, wanted["instance_group"],
                                                  ir.gpus_per_pod(wanted), 1)
    plan.update({"replicas": current["replicas"], "steps": [
        "roll out one new pod at a time; old pods serve until new ones are Ready",
        "send one completion through the Service (smoke test)",
        "on failure re-apply the previous Deployment and fail saying why"],
        "manifest": manifest})
    if update.dry_run:
        return Outcome(True, plan, dry_run=True)
    params.update({"replicas": current["replicas"], "request": wanted,
                   "previous": ir.as_it_was(dep)})
    return await start(ctx, UPDATE, target(cluster, name), params, idempotency_key, plan)


@service(Effect.DESTROY, "endpoint.delete",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def delete_endpoint(ctx: Ctx, cluster: str, name: str, *, confirm: bool = False,
                          dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    ref, kube = await kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "endpoint": name}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, DELETE, target(cluster, name), params, idempotency_key, {})
    if await managed.is_managed(kube, name):
        params["managed"] = True   # the config goes; the operator's objects follow it (GC)
    else:
        await _own(kube, cluster, name)
    plan = {"endpoint": name, "action": "delete",
            "warning": "The Deployment, its pods and the Service (and the SGLang router's "
            "objects, if any) are deleted; requests in flight fail."}
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    if not confirm:
        raise ConfirmationRequired("Deleting an endpoint stops serving its model.",
                                   hint="Send confirm=true once the user agreed.")
    return await start(ctx, DELETE, target(cluster, name), params, idempotency_key, plan)


# A read (it changes no object), but it spends GPU time: operator role, like a mutation.
@service(Effect.READ, "endpoint.invoke", min_role=Role.OPERATOR)
async def invoke_endpoint(ctx: Ctx, cluster: str, name: str, request: InvokeRequest) -> Shape:
    """One request through the API server's service proxy, as podplane (no public load
    balancer needed, nothing exposed): OpenAI-compatible, or the LMI container's
    (domain/inference/invoke.py)."""
    _, kube = await kube_of(ctx, cluster)
    dep, svc = await managed.objects(kube, name) or await pool.endpoint_objects(kube, name) \
        or await ic.find(kube, cluster, name)
    if svc is None:
        raise NotFound(f"Endpoint {name!r} has no Service.", hint="Delete and recreate it.")
    port = int(svc["spec"]["ports"][0]["port"])
    model = (svc["metadata"].get("annotations") or {}).get(SERVED_MODEL, name)  # a pool's
    container = views.engine_container((dep.get("spec") or {}).get("template") or {})
    path, payload = invoke.request_for(container, model, request.prompt, request.max_tokens,
                                       request.chat)   # the LMI container's or OpenAI's
    status, answer = await kube.proxy("POST", ir.NAMESPACE, name, port, path, payload)
    if status == 503:
        raise EndpointUnavailable(f"Endpoint {name!r} has no Ready pod behind its Service.",
                                  retryable=True, hint="Wait for the endpoint to be Ready "
                                  "(endpoint_get), or scale it up.")
    if status >= 400 or not isinstance(answer, dict):
        raise CloudError(f"Endpoint {name!r} answered {status}: {str(answer)[:300]}",
                         code="endpoint_error")
    return {"endpoint": name, "path": "/" + path, "status": status,
            "ready_replicas": int((dep.get("status") or {}).get("readyReplicas") or 0),
            "response": answer}
