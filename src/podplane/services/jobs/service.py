"""Training jobs on a managed cluster: submit from a recipe or your own container
(parameters, capacity and placement checked in the plan), list, get, cancel, delete, logs
and events."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from podplane.domain.effects import Effect
from podplane.domain.errors import ConfirmationRequired, InvalidInput, NotFound
from podplane.domain.features.fsx import CLAIM as FSX_CLAIM
from podplane.domain.features.mlflow import ARN_ANNOTATION, SERVICE_ACCOUNT
from podplane.domain.inference.images import check_registry
from podplane.domain.instance_groups import CapacityType, shape_of
from podplane.domain.jobs import render as rj
from podplane.domain.jobs import scripts as job_scripts
from podplane.domain.jobs import views
from podplane.domain.jobs.errors import InsufficientGpus, JobExists
from podplane.domain.jobs.kinds import KINDS, NAMESPACE, RAY
from podplane.domain.jobs.recipes import RECIPES, Recipe
from podplane.domain.jobs.requests import JobRequest, stored
from podplane.domain.jobs.workloads import Workload, workload_of
from podplane.domain.manifests.storage import CLAIM
from podplane.services import pod_logs as job_logs_room
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.features.mlflow_runs import run_view
from podplane.services.jobs import cluster as jc
from podplane.services.jobs import ray as ray_jobs
from podplane.services.jobs import scripts as scripts_io
from podplane.services.jobs import stream as job_stream
from podplane.services.jobs.stall import stall_of
from podplane.services.jobs.workflows import CANCEL, DELETE, SUBMIT
from podplane.services.mutation import Outcome, key_used, start, unchanged_or
from podplane.services.registry import service

Shape = dict[str, Any]


def target(cluster: str, job: str) -> str:
    return f"cluster/{cluster}/job/{job}"


def recipe_view(r: Recipe) -> Shape:
    return {"name": r.name, "framework": r.framework, "description": r.description,
            "image": r.image, "kind": r.kind, "entrypoint": list(r.entrypoint),
            "default_replicas": r.default_replicas, "elastic_capable": r.elastic_capable,
            "resources": asdict(r.resources),
            "params": [{**asdict(p), "choices": list(p.choices)} for p in r.params],
            "mounts": dict(rj.MOUNTS)}


@service(Effect.READ, "job.recipes")
async def list_recipes(ctx: Ctx) -> list[Shape]:
    return [recipe_view(r) for r in RECIPES]


@service(Effect.READ, "job.list")
async def list_jobs(ctx: Ctx, cluster: str) -> list[Shape]:
    _, kube = await scope.kube_of(ctx, cluster)
    found = [job for kind in KINDS.values() for job in await jc.jobs_of_kind(kube, kind)]
    pods = await kube.list("v1", "Pod", namespace=NAMESPACE) if found else []
    return sorted((views.list_item(j, pods) for j in found), key=lambda s: s["name"])


@service(Effect.READ, "job.get")
async def get_job(ctx: Ctx, cluster: str, job: str) -> Shape:
    _, kube = await scope.kube_of(ctx, cluster)
    found = await jc.find_job(kube, cluster, job)
    pods = await jc.pods_of(kube, found)
    events = await jc.events_of(kube, found, pods)
    bucket = await scope.bucket_of(ctx, cluster)
    view = views.job_view(found, pods, await jc.nodes_by_name(kube), events,
                          rj.prefixes(bucket, job))
    stalled = await stall_of(kube, pods, ctx.app.settings.job_stall_seconds) \
        if view["status"] == "Running" else None
    return {**view, "stalled": stalled, "files": await jc.files_of(ctx, bucket, job),
            "mlflow": await run_view(cloud_of(ctx.app).aws.mlflow, found)}


@service(Effect.READ, "job.events")
async def job_events(ctx: Ctx, cluster: str, job: str) -> list[Shape]:
    _, kube = await scope.kube_of(ctx, cluster)
    found = await jc.find_job(kube, cluster, job)
    events = await jc.events_of(kube, found, await jc.pods_of(kube, found))
    return [{"time": e.get("lastTimestamp") or e.get("eventTime"), "type": e.get("type"),
             "reason": e.get("reason"), "message": e.get("message"),
             "object": (e.get("involvedObject") or {}).get("name"),
             "kind": (e.get("involvedObject") or {}).get("kind"),
             "count": e.get("count")} for e in events]


@service(Effect.READ, "job.logs")
async def job_logs(ctx: Ctx, cluster: str, job: str, pod: str | None = None,
                   container: str | None = None, since_seconds: int | None = None,
                   tail: int | None = None, cursor: int = 0,
                   limit: int = job_logs_room.PAGE) -> Shape:
    job_logs_room.check_bounds(since_seconds, tail)
    _, kube = await scope.kube_of(ctx, cluster)
    found = await jc.find_job(kube, cluster, job)
    pods = [p["metadata"]["name"] for p in await jc.pods_of(kube, found)]
    return {"job": job, **await job_logs_room.page(
        kube, f"Job {job!r}", sorted(pods), pod, container, since_seconds, tail, cursor, limit)}


@service(Effect.CREATE, "job.submit",
         target=lambda cluster, request, *_a, **_k: target(cluster, request.name))
async def submit_job(ctx: Ctx, cluster: str, request: JobRequest, *,
                     idempotency_key: str | None = None) -> Outcome:
    work = workload_of(request)  # 422 naming the field, before anything else
    _check_images(ctx, request)
    ref, kube = await scope.kube_of(ctx, cluster)
    if work.kind == RAY.kind:  # 409 naming the feature to enable
        await ray_jobs.require_kuberay(kube, cluster, work.describe())
    gpus = await jc.group_gpus(kube, request.instance_group)
    bucket = await scope.bucket_of(ctx, cluster) if await _has_claim(kube) else None
    fsx = FSX_CLAIM if await _has_claim(kube, FSX_CLAIM) else None
    facts = rj.Facts(gpus.gpus_per_node, gpus.efa_per_node, bucket, fsx,
                     await _mlflow_arn(kube))
    body = stored(request)
    op_params = {"cluster_ref": ref.params(), "job": request.name, "kind": work.kind,
                 "request": body, "facts": asdict(facts)}
    if await key_used(ctx, idempotency_key):  # a replay returns its operation
        return await start(ctx, SUBMIT, target(cluster, request.name), op_params,
                           idempotency_key, {})
    try:
        plan = await _plan(ctx, cluster, ref, kube, work, request, gpus)
    except JobExists as taken:
        return await unchanged_or(taken, ctx, SUBMIT, target(cluster, request.name), body,
                                  {"job": request.name}, request.dry_run)
    plan["manifest"] = rj.manifest_from(request, facts)
    if work.recipe and work.scripts:  # applied first, so a manifest applied by hand needs it
        plan["config_map"] = job_scripts.config_map(request.name, work.recipe.name,
                                                    scripts_io.files(work.recipe))
        plan["notes"].append(f"Training scripts ({', '.join(work.scripts)}) are mounted at "
                             f"{job_scripts.SCRIPTS_DIR} from ConfigMap "
                             f"{job_scripts.config_map_name(request.name)}, deleted with "
                             "the job.")
    plan["outputs"] = rj.prefixes(bucket, request.name)
    if not bucket:
        plan["notes"].append("The cluster has no shared S3 claim: /data, /models, "
                             "/checkpoints and /outputs are not mounted.")
    if facts.mlflow_arn:
        plan["notes"].append(f"Logs to SageMaker MLflow ({facts.mlflow_arn}), experiment "
                             f"{request.name!r}.")
    if fsx:
        plan["notes"].append(f"FSx for Lustre (claim {fsx}) is mounted at {rj.FSX_PATH}.")
    if request.dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, SUBMIT, target(cluster, request.name), op_params, idempotency_key,
                       plan)


def _check_images(ctx: Ctx, request: JobRequest) -> None:
    """An image the user picks runs code in the cluster: the admin's registry list applies
    (ADR 0017), to your own container and to a recipe's `image` parameter alike."""
    allowed = ctx.app.settings.allowed_image_registries
    if request.container is not None:
        check_registry(request.container.image, allowed, field="container.image")
    picked = request.params.get("image")
    if isinstance(picked, str):
        check_registry(picked, allowed, field="params.image")


async def _plan(ctx: Ctx, cluster: str, ref: scope.ClusterRef, kube: Any, work: Workload,
                request: JobRequest, gpus: scope.GroupGpus) -> Shape:
    """The checks a submission passes (group, Spot and elastic, name, GPUs) and its plan."""
    described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
    group = scope.chosen_group(described, cluster, request.instance_group)
    capacity = shape_of(group).capacity_type
    if request.elastic and capacity is CapacityType.SPOT:
        raise InvalidInput("Elastic training is refused on a Spot instance group: Spot "
                           "reclaims would be taken for faults and spend the restart budget.",
                           field="elastic", hint="Use an on-demand or training-plan group, "
                           "or submit without elastic.")
    if request.elastic and not work.elastic_capable:
        raise InvalidInput(f"{work.describe()} ({work.kind}) does not support elastic "
                           "training.", field="elastic")
    await _refuse_existing(kube, cluster, request.name)
    replicas = request.replicas or work.default_replicas
    per_replica = gpus.gpus_per_node if request.gpus_per_replica is None \
        else request.gpus_per_replica
    if per_replica > gpus.gpus_per_node:
        raise InvalidInput(f"{per_replica} GPUs per replica, but the nodes of "
                           f"{request.instance_group!r} have {gpus.gpus_per_node}.",
                           field="gpus_per_replica")
    fits = gpus.fits(per_replica)
    if fits < replicas:
        wanted = replicas * per_replica
        raise InsufficientGpus(f"{replicas} replicas x {per_replica} GPUs = {wanted} GPUs "
                               f"requested, {gpus.free} free on the {gpus.healthy_nodes} healthy "
                               f"node(s) of {request.instance_group!r} ({fits} replica(s) fit).",
                               hint="Use fewer replicas, wait for running jobs, or scale "
                               "the group (instance_group_scale).")
    return {"job": request.name, "kind": work.kind, "recipe": work.recipe_name,
            "image": work.image,
            "instance_group": request.instance_group, "capacity_type": capacity.value,
            "replicas": replicas, "gpus_per_replica": per_replica,
            "gpus_requested": replicas * per_replica, "gpus_free": gpus.free,
            "max_restarts": request.max_restarts, "elastic": request.elastic,
            "params": work.params, "notes": []}


async def _refuse_existing(kube: Any, cluster: str, name: str) -> None:
    try:
        await jc.find_job(kube, cluster, name)
    except NotFound:
        return
    raise JobExists(f"A job named {name!r} already exists on {cluster!r}.",
                    hint="Choose another name, or delete the old job.")


async def _mlflow_arn(kube: Any) -> str | None:
    """The tracking server jobs log to: the mlflow feature's ServiceAccount names it."""
    account = await kube.get("v1", "ServiceAccount", SERVICE_ACCOUNT, NAMESPACE)
    return ((account or {}).get("metadata", {}).get("annotations") or {}).get(ARN_ANNOTATION)


async def _has_claim(kube: Any, claim: str = CLAIM) -> bool:
    return await kube.get("v1", "PersistentVolumeClaim", claim, NAMESPACE) is not None


@service(Effect.MUTATE, "job.cancel",
         target=lambda cluster, job, *_a, **_k: target(cluster, job))
async def cancel_job(ctx: Ctx, cluster: str, job: str, *, dry_run: bool = False,
                     idempotency_key: str | None = None) -> Outcome:
    ref, kube = await scope.kube_of(ctx, cluster)
    params = {"cluster_ref": ref.params(), "job": job}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, CANCEL, target(cluster, job), params, idempotency_key, {})
    found = await jc.find_job(kube, cluster, job)
    status = views.status_of(found)
    plan = {"job": job, "kind": found["kind"], "status": status,
            "action": "suspend (spec.suspend): KubeRay deletes the RayCluster and the submitter "
            "Job, the RayJob is kept" if found["kind"] == RAY.kind else
            "suspend (runPolicy.suspend): the pods are deleted, the job is kept"}
    if status in views.DONE:
        return Outcome(False, plan)
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, CANCEL, target(cluster, job), {**params, "kind": found["kind"]},
                       idempotency_key, plan)


@service(Effect.DESTROY, "job.delete",
         target=lambda cluster, job, *_a, **_k: target(cluster, job))
async def delete_job(ctx: Ctx, cluster: str, job: str, *, confirm: bool = False,
                     dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    ref, kube = await scope.kube_of(ctx, cluster)
    params = {"cluster_ref": ref.params(), "job": job}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, DELETE, target(cluster, job), params, idempotency_key, {})
    found = await jc.find_job(kube, cluster, job)
    plan = {"job": job, "kind": found["kind"], "status": views.status_of(found),
            "action": "delete", "warning": "The job, its pods and their logs are deleted; "
            "checkpoints and outputs in the bucket stay."}
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    if not confirm:
        raise ConfirmationRequired("Deleting a job removes its pods and logs.",
                                   hint="Send confirm=true once the user agreed.")
    return await start(ctx, DELETE, target(cluster, job), {**params, "kind": found["kind"]},
                       idempotency_key, plan)


@service(Effect.READ, "job.logs.stream")
async def open_log_stream(ctx: Ctx, cluster: str, job: str, pod: str | None,
                          options: job_stream.StreamOptions) -> job_stream.LogStream:
    """A live, multiplexed stream of the job's pods (or one pod), bounded in memory."""
    job_logs_room.check_bounds(options.since_seconds, options.tail)
    _, kube = await scope.kube_of(ctx, cluster)
    found = await jc.find_job(kube, cluster, job)
    pods = sorted(p["metadata"]["name"] for p in await jc.pods_of(kube, found))
    if pod is not None and pod not in pods:
        raise NotFound(f"Job {job!r} has no pod {pod!r}.")
    return job_stream.LogStream(kube, [pod] if pod else pods, options)
