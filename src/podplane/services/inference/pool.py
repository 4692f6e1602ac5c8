"""Warm pools (domain/inference/pool.py): create, list, get, scale, delete, and assign a pool's
pods to endpoints. Scale-in removes free pods only: one that would need an assigned or
draining pod is refused (409 `pool_pods_assigned`, unassign first: that drains), and so is one
whose victims Kubernetes could not be made to pick (409 `pool_scale_unsafe`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.catalog import lookup
from podplane.domain.effects import Effect
from podplane.domain.errors import ConfirmationRequired, InvalidInput, NotFound
from podplane.domain.inference import pool as dp
from podplane.domain.inference import pool_views as pv
from podplane.domain.inference.engines import ENGINES
from podplane.domain.inference.errors import (
    EndpointExists,
    PoolPodsAssigned,
    PoolTooSmall,
)
from podplane.domain.inference.images import check_registry
from podplane.domain.inference.pool_requests import AssignRequest, PoolRequest
from podplane.domain.inference.render import (
    COMPONENT,
    GROUP_ANNOTATION,
    NAMESPACE,
    check_fits,
    gpus_per_pod,
)
from podplane.domain.inference.requests import MAX_REPLICAS
from podplane.domain.jobs.kinds import MANAGED_BY
from podplane.domain.jobs.render import GPU
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.inference.cluster import refuse_no_room
from podplane.services.inference.pool_steps import ASSIGN, CREATE, DELETE, SCALE
from podplane.services.mutation import Outcome, key_used, start, unchanged_or
from podplane.services.registry import escalate_to_destroy, service
from podplane.services.scope import kube_of

Shape = dict[str, Any]
OWNED = {MANAGED_BY: "podplane", COMPONENT: dp.POOL_COMPONENT}
ENDPOINT_OWNED = {MANAGED_BY: "podplane", COMPONENT: dp.ENDPOINT_COMPONENT}


def target(cluster: str, name: str) -> str:
    return f"cluster/{cluster}/pool/{name}"


async def _pool(kube: KubePort, name: str) -> Shape | None:
    dep = await kube.get("apps/v1", "Deployment", name, NAMESPACE)
    labels = ((dep or {}).get("metadata") or {}).get("labels") or {}
    owned = {**OWNED, dp.POOL_LABEL: name}.items()
    return dep if dep is not None and all(labels.get(k) == v for k, v in owned) else None


async def find(kube: KubePort, cluster: str, name: str) -> Shape:
    dep = await _pool(kube, name)
    if dep is None:
        raise NotFound(f"Cluster {cluster!r} has no warm pool {name!r}.",
                       hint="List pools with GET .../pools.")
    return dep


async def pods_of(kube: KubePort, name: str) -> list[Shape]:
    return await kube.list("v1", "Pod", namespace=NAMESPACE, labels={dp.POOL_LABEL: name})


async def endpoint_service(kube: KubePort, name: str) -> Shape | None:
    """The Service of endpoint `name` if it is an endpoint on a pool podplane made."""
    svc = await kube.get("v1", "Service", name, NAMESPACE)
    labels = ((svc or {}).get("metadata") or {}).get("labels") or {}
    ours = all(labels.get(k) == v for k, v in ENDPOINT_OWNED.items())
    return svc if svc is not None and ours else None


async def endpoint_objects(kube: KubePort, name: str) -> tuple[Shape, Shape] | None:
    """An endpoint on a pool, for invoke: (its Deployment-like status, its Service)."""
    if (svc := await endpoint_service(kube, name)) is None:
        return None
    pods = await pods_of(kube, pv.pool_of(svc) or "")
    serving = [p for p in pods if dp.assigned_to(p) == name and dp.ready(p)]
    return {"status": {"readyReplicas": len(serving)}}, svc


async def endpoint_summaries(kube: KubePort) -> list[Shape]:
    """The endpoints on pools, for endpoint list (an endpoint whose pool is gone is left
    out: nothing serves it)."""
    services = await kube.list("v1", "Service", namespace=NAMESPACE, labels=ENDPOINT_OWNED)
    if not services:
        return []
    pools = {d["metadata"]["name"]: d for d in await kube.list(
        "apps/v1", "Deployment", namespace=NAMESPACE, labels=OWNED)}
    pods: dict[str, list[Shape]] = {}
    found = []
    for svc in services:
        if (name := pv.pool_of(svc)) in pools and name is not None:
            pods.setdefault(name, await pods_of(kube, name))
            found.append(pv.endpoint_summary(pools[name], svc, pods[name]))
    return found


async def endpoint_view(kube: KubePort, name: str) -> Shape | None:
    """endpoint get of an endpoint on a pool; None if `name` is not one."""
    if (svc := await endpoint_service(kube, name)) is None:
        return None
    if (dep := await _pool(kube, pv.pool_of(svc) or "")) is None:
        return None
    return pv.endpoint_view(dep, svc, await pods_of(kube, dep["metadata"]["name"]))


@service(Effect.READ, "pool.list")
async def list_pools(ctx: Ctx, cluster: str) -> list[Shape]:
    _, kube = await kube_of(ctx, cluster)
    deps = await kube.list("apps/v1", "Deployment", namespace=NAMESPACE, labels=OWNED)
    return [dp.pool_summary(d, await pods_of(kube, d["metadata"]["name"]))
            for d in sorted(deps, key=lambda d: str(d["metadata"]["name"]))]


@service(Effect.READ, "pool.get")
async def get_pool(ctx: Ctx, cluster: str, name: str) -> Shape:
    _, kube = await kube_of(ctx, cluster)
    return dp.pool_summary(await find(kube, cluster, name), await pods_of(kube, name))


@service(Effect.CREATE, "pool.create",
         target=lambda cluster, request, *_a, **_k: target(cluster, request.name))
async def create_pool(ctx: Ctx, cluster: str, request: PoolRequest, *,
                      idempotency_key: str | None = None) -> Outcome:
    check_registry(request.image, ctx.app.settings.allowed_image_registries)
    ref, kube = await kube_of(ctx, cluster)
    body = {k: v for k, v in asdict(request).items() if k != "dry_run"}
    body["image"] = request.image or ENGINES[request.engine].image
    params: Shape = {"cluster_ref": ref.params(), "pool": request.name,
                     "replicas": request.replicas, "request": body}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, CREATE, target(cluster, request.name), params,
                           idempotency_key, {})
    described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
    group = scope.chosen_group(described, cluster, request.instance_group)
    check_fits(body, lookup(str(group.get("InstanceType", ""))))  # GPUs per node (422)
    manifest = dp.pool_deployment(body)  # refuses what the engine cannot do (422)
    if await kube.get("apps/v1", "Deployment", request.name, NAMESPACE) is not None:
        taken = EndpointExists(f"A Deployment named {request.name!r} already exists on "
                               f"{cluster!r}.", hint="Choose another pool name.")
        return await unchanged_or(taken, ctx, CREATE, target(cluster, request.name), body,
                                  {"pool": request.name}, request.dry_run)
    free = await refuse_no_room(kube, request.instance_group, gpus_per_pod(body),
                                 request.replicas)
    plan = {"pool": request.name, "replicas": request.replicas, "gpus_free": free,
            "manifest": manifest}
    if request.dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, CREATE, target(cluster, request.name), params, idempotency_key,
                       plan)


@service(Effect.MUTATE, "pool.scale",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def scale_pool(ctx: Ctx, cluster: str, name: str, replicas: int, *,
                     dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    if not 0 <= replicas <= MAX_REPLICAS:
        raise InvalidInput(f"replicas must be 0..{MAX_REPLICAS}.", field="replicas")
    ref, kube = await kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "pool": name, "replicas": replicas}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, SCALE, target(cluster, name), params, idempotency_key, {})
    dep = await find(kube, cluster, name)
    current = int((dep.get("spec") or {}).get("replicas", 0))
    plan: Shape = {"pool": name, "from": current, "to": replicas}
    if current == replicas:
        return Outcome(False, plan)
    if replicas < current:
        victims = dp.scale_in_plan(await pods_of(kube, name), name, current - replicas)
        plan["remove"] = [v["metadata"]["name"] for v in victims]
    else:
        group = (dep["metadata"].get("annotations") or {}).get(GROUP_ANNOTATION)
        gpus = int(dep["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
                   .get(GPU, 1))
        plan["gpus_free"] = await refuse_no_room(kube, str(group), gpus, replicas - current)
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, SCALE, target(cluster, name), params, idempotency_key, plan)


@service(Effect.MUTATE, "pool.assign",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def assign(ctx: Ctx, cluster: str, name: str, request: AssignRequest, *,
                 idempotency_key: str | None = None) -> Outcome:
    """Give an endpoint `pods` pods of the pool (labels, no pod starts); fewer drains the
    extra ones (out of the Service first, then until they have no request in flight)."""
    ref, kube = await kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "pool": name, "endpoint": request.endpoint,
                     "pods": request.pods}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, ASSIGN, target(cluster, name), params, idempotency_key, {})
    dep = await find(kube, cluster, name)
    await _refuse_foreign_service(kube, cluster, name, request.endpoint)
    pods = [p for p in await pods_of(kube, name) if not dp.leaving(p)]
    mine = [p for p in pods if dp.assigned_to(p) == request.endpoint]
    free_ready = [p for p in pods if dp.is_free(p) and dp.ready(p)]
    plan: Shape = {"pool": name, "endpoint": request.endpoint, "from": len(mine),
                   "to": request.pods, "service": dp.endpoint_service(dep, request.endpoint)}
    if request.pods > len(mine) and request.pods - len(mine) > len(free_ready):
        raise PoolTooSmall(f"Pool {name!r} has {len(free_ready)} free Ready pod(s); endpoint "
                           f"{request.endpoint!r} needs {request.pods - len(mine)} more.",
                           hint="Scale the pool up first (PATCH .../pools/{name}).")
    if request.pods == len(mine) and (request.pods or not await _has_service(kube, request)):
        return Outcome(False, plan, dry_run=request.dry_run)
    if request.pods == 0:   # the endpoint stops serving: as endpoint.delete (ADR 0016)
        escalate_to_destroy(ctx, "pool.assign", f"pods=0 removes endpoint "
                            f"{request.endpoint!r} and its Service", confirm=request.confirm,
                            dry_run=request.dry_run)
    if request.dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, ASSIGN, target(cluster, name), params, idempotency_key, plan)


async def _has_service(kube: KubePort, request: AssignRequest) -> bool:
    return await kube.get("v1", "Service", request.endpoint, NAMESPACE) is not None


async def _refuse_foreign_service(kube: KubePort, cluster: str, pool: str,
                                  endpoint: str) -> None:
    """The endpoint's name must be free, or be this pool's own endpoint Service."""
    svc = await kube.get("v1", "Service", endpoint, NAMESPACE)
    labels = ((svc or {}).get("metadata") or {}).get("labels") or {}
    ours = labels.get(COMPONENT) == dp.ENDPOINT_COMPONENT and labels.get(dp.POOL_LABEL) == pool
    if (svc is not None and not ours) or \
            await kube.get("apps/v1", "Deployment", endpoint, NAMESPACE) is not None:
        raise EndpointExists(f"{endpoint!r} is already taken on {cluster!r} by an object that "
                             f"is not pool {pool!r}'s endpoint.", hint="Choose another name.")


@service(Effect.DESTROY, "pool.delete",
         target=lambda cluster, name, *_a, **_k: target(cluster, name))
async def delete_pool(ctx: Ctx, cluster: str, name: str, *, confirm: bool = False,
                      dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    ref, kube = await kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "pool": name}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, DELETE, target(cluster, name), params, idempotency_key, {})
    await find(kube, cluster, name)
    busy = [p["metadata"]["name"] for p in await pods_of(kube, name)
            if not dp.leaving(p) and not dp.is_free(p)]
    if busy:
        raise PoolPodsAssigned(f"Pool {name!r} still serves endpoints ({', '.join(busy)}).",
                               hint="Unassign its endpoints first (pods=0): that drains them.")
    plan = {"pool": name, "action": "delete"}
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    if not confirm:
        raise ConfirmationRequired("Deleting a pool stops its warm pods.",
                                   hint="Send confirm=true once the user agreed.")
    return await start(ctx, DELETE, target(cluster, name), params, idempotency_key, plan)
