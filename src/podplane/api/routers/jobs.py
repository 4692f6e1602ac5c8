"""Training jobs: recipes, submit (202), list, get, cancel, delete (confirm), logs, events."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Path, WebSocket
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.websockets import WebSocketDisconnect

from podplane.api.auth import audit_ws_limited, audit_ws_refused, ctx_for, websocket_principal
from podplane.api.params import (
    ClusterName,
    Confirm,
    DryRun,
    IdempotencyKey,
    LogContainer,
    LogCursor,
    LogLimit,
    LogPod,
    LogSince,
    LogTail,
)
from podplane.api.routers.operations import MadeAlreadyOut, OperationOut, out
from podplane.domain.errors import InvalidInput, PodplaneError
from podplane.domain.jobs.requests import JOB_NAME_MAX, JobRequest, ParamValue
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.services import pod_logs as logs_room
from podplane.services.access.auth import until_revoked as until_token_revoked
from podplane.services.access.limits import STREAMS, limits_of
from podplane.services.context import Ctx
from podplane.services.jobs import service as svc
from podplane.services.jobs import stream as job_stream
from podplane.services.mutation import Outcome
from podplane.services.registry import admit, effect_of

router = APIRouter(tags=["jobs"])
JobName = Annotated[str, Path(min_length=1, max_length=JOB_NAME_MAX, pattern=DNS_LABEL_PATTERN)]
BASE = "/clusters/{cluster}/jobs"


@dataclass(frozen=True, kw_only=True)
class JobIn(JobRequest):
    """Submit a job onto one instance group: a recipe (GET /api/v1/recipes), or `container`,
    your own image and command (docs/training.md, "Bring your own workload")."""


class ParamOut(BaseModel):
    name: str
    type: str
    default: ParamValue
    description: str
    minimum: float | None
    maximum: float | None
    choices: list[str]


class ResourcesOut(BaseModel):
    gpus: int | None
    cpu: str
    memory: str
    efa: bool


class RecipeOut(BaseModel):
    name: str
    framework: str
    description: str
    image: str
    kind: str
    entrypoint: list[str]
    default_replicas: int
    elastic_capable: bool
    resources: ResourcesOut
    params: list[ParamOut]
    mounts: dict[str, str] = Field(description="Mount path -> prefix in the cluster's bucket "
                                   "({job} is the job's name).")


class JobSummaryOut(BaseModel):
    name: str
    kind: str
    recipe: str | None = Field(description="Null for your own workload and for jobs not "
                               "submitted by podplane.")
    image: str | None = Field(description="The image its (first) pods run.")
    managed_by: str | None = Field(description="app.kubernetes.io/managed-by: `podplane` "
                                   "for jobs podplane submitted.")
    status: str = Field(description="Submitted, Pending, Running, Succeeded, Failed or "
                        "Cancelled.")
    created_at: str | None
    started_at: str | None
    completed_at: str | None
    replicas: int


class BudgetOut(BaseModel):
    budget: int = Field(description="Restarts allowed after faults before the job fails.")
    spent: int
    remaining: int


class FaultOut(BaseModel):
    instance_ids: list[str]
    pods: list[str]
    restart_type: str | None
    reason: str | None
    message: str | None = Field(description="Which node and why, as the operator reported it.")


class NodeVerdictOut(BaseModel):
    health: str | None = Field(description="sagemaker.amazonaws.com/node-health-status.")
    schedulable: bool
    fault: str | None
    present: bool


class PodOut(BaseModel):
    name: str
    phase: str
    node: str | None
    node_verdict: NodeVerdictOut | None
    containers: list[str]
    restarts: int
    ready: bool
    role: str | None = Field(None, description="RayJob pods: head, worker or submitter (the "
                             "driver's pod, whose log is the driver's).")


class RayOut(BaseModel):
    """What KubeRay reports on a RayJob (status.jobDeploymentStatus, jobStatus, ...)."""

    job_deployment_status: str | None
    job_status: str | None = Field(description="The Ray job: PENDING, RUNNING, SUCCEEDED, "
                                   "FAILED or STOPPED.")
    job_id: str | None
    ray_cluster: str | None = Field(description="The RayCluster KubeRay made for the job.")
    dashboard_url: str | None
    ray_version: str | None
    reason: str | None
    message: str | None
    start_time: str | None
    end_time: str | None
    ray_job_start_time: str | None
    ray_job_end_time: str | None
    driver_pod: str | None


class ConditionOut(BaseModel):
    type: str | None
    status: str | None
    reason: str | None
    message: str | None
    last_transition_time: str | None


class OutputsOut(BaseModel):
    checkpoints: str | None
    outputs: str | None


class OutputFileOut(BaseModel):
    kind: Literal["checkpoints", "outputs"]
    key: str = Field(description="The object's key in the cluster's bucket.")
    size: int
    last_modified: datetime | None


class JobListItemOut(JobSummaryOut):
    pods: int = Field(description="Pods the job has now.")
    pods_ready: int = Field(description="Of those, the pods whose containers are all ready.")
    restarts: BudgetOut


class StallOut(BaseModel):
    since_seconds: int = Field(description="How long every running pod has been silent, "
                               "at least.")
    last_line_at: str = Field(description="The newest log line's time (the kubelet's).")
    pod: str = Field(description="The pod that wrote it.")


class MlflowRunOut(BaseModel):
    tracking_server_arn: str = Field(description="MLFLOW_TRACKING_URI of the job's pods.")
    experiment: str
    service_account: str
    run_id: str | None = Field(description="The experiment's newest run; null before one.")
    run_name: str | None = None
    status: str | None = Field(description="RUNNING, FINISHED, FAILED or KILLED (MLflow).")
    metrics: dict[str, float] = Field(description="Each metric's last value.")
    url: str | None = Field(description="The run in the tracking server's MLflow UI (needs "
                            "an AWS console session or a presigned URL).")
    error: str | None = Field(description="Why the tracking server could not be read.")


class JobOut(JobSummaryOut):
    stalled: StallOut | None = Field(description="Set while the job runs but no pod has "
                                     "written a log line for `since_seconds`: a hang.")
    restarts: BudgetOut
    last_fault: FaultOut | None
    pods: list[PodOut]
    pod_selector: dict[str, str]
    conditions: list[ConditionOut]
    outputs: OutputsOut
    files: list[OutputFileOut] | None = Field(description="What the job saved under its "
                                              "prefixes, newest first (at most 100); null when "
                                              "the bucket could not be read.")
    ray: RayOut | None = Field(None, description="RayJobs: KubeRay's view of the job.")
    mlflow: MlflowRunOut | None = Field(None, description="The run the job logged to "
                                        "SageMaker MLflow (jobs submitted while the mlflow "
                                        "feature was on); null otherwise.")


class LogLineOut(BaseModel):
    pod: str
    line: str


class PodLogPageOut(BaseModel):
    pods: list[str]
    lines: list[LogLineOut]
    next_cursor: int | None = Field(description="Pass as `cursor` for the next page.")
    total: int
    notes: dict[str, str] = Field(description="Pods without logs yet, and why.")


class LogPageOut(PodLogPageOut):
    job: str


class EventOut(BaseModel):
    time: str | None
    type: str | None
    reason: str | None
    message: str | None
    object: str | None
    kind: str | None
    count: int | None


class SubmitPlanOut(BaseModel):
    job: str
    kind: str
    recipe: str | None
    image: str
    instance_group: str
    capacity_type: str
    replicas: int
    gpus_per_replica: int
    gpus_requested: int
    gpus_free: int
    max_restarts: int
    elastic: bool
    params: dict[str, ParamValue]
    notes: list[str]
    outputs: OutputsOut
    manifest: dict[str, Any] = Field(description="The job object as it is applied.")


class JobActionPlanOut(BaseModel):
    job: str
    kind: str
    status: str
    action: str
    warning: str | None = None


JobPlan = SubmitPlanOut | JobActionPlanOut | MadeAlreadyOut


class JobMutationOut(OperationOut):
    changed: bool = True
    plan: JobPlan | dict[str, str]


class JobNoChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: JobPlan


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": JobMutationOut, "description": "The operation that makes the change."},
    200: {"model": JobNoChangeOut, "description": "No change needed, or the dry-run plan."},
}


class JobActionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    confirm: bool = False
    dry_run: bool = False


def answer(outcome: Outcome) -> JSONResponse:
    if outcome.operation is None:
        body = {"changed": outcome.changed, "dry_run": outcome.dry_run, "plan": outcome.plan}
        return JSONResponse(jsonable_encoder(body), status_code=200)
    op = out(outcome.operation).model_dump(mode="json")
    return JSONResponse(jsonable_encoder({**op, "changed": True, "plan": outcome.plan}),
                        status_code=202)


@router.get("/recipes", response_model=list[RecipeOut])
async def list_recipes(ctx: Annotated[Ctx, Depends(ctx_for(svc.list_recipes))]) -> Any:
    """Recipes: framework, image, entrypoint, parameters with defaults and bounds."""
    return await svc.list_recipes(ctx)


@router.get(BASE, response_model=list[JobListItemOut])
async def list_jobs(cluster: ClusterName,
                    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_jobs))]) -> Any:
    """Every training job on the cluster (also those submitted with `hyp` or kubectl)."""
    return await svc.list_jobs(ctx, cluster)


@router.post(BASE, response_model=None, status_code=202, responses=RESPONSES)
async def submit_job(cluster: ClusterName, body: JobIn,
                     ctx: Annotated[Ctx, Depends(ctx_for(svc.submit_job))],
                     dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                     ) -> JSONResponse:
    """Submit a job from a recipe or your own container: parameters, group, GPUs and Spot
    checked in the plan."""
    request = JobRequest(**{**body.__dict__, "dry_run": dry_run or body.dry_run})
    return answer(await svc.submit_job(ctx, cluster, request, idempotency_key=idempotency_key))


@router.get(BASE + "/{job}", response_model=JobOut)
async def get_job(cluster: ClusterName, job: JobName,
                  ctx: Annotated[Ctx, Depends(ctx_for(svc.get_job))]) -> Any:
    """Status, restart budget and spent, last fault, pods with their node's health."""
    return await svc.get_job(ctx, cluster, job)


@router.get(BASE + "/{job}/logs", response_model=LogPageOut)
async def job_logs(cluster: ClusterName, job: JobName,
                   ctx: Annotated[Ctx, Depends(ctx_for(svc.job_logs))],
                   pod: LogPod = None, container: LogContainer = None,
                   since_seconds: LogSince = None, tail: LogTail = None,
                   cursor: LogCursor = 0, limit: LogLimit = logs_room.PAGE) -> Any:
    """Logs of every pod (or one), bounded and paged with `cursor`."""
    return await svc.job_logs(ctx, cluster, job, pod, container, since_seconds, tail, cursor,
                              limit)


@router.get(BASE + "/{job}/events", response_model=list[EventOut])
async def job_events(cluster: ClusterName, job: JobName,
                     ctx: Annotated[Ctx, Depends(ctx_for(svc.job_events))]) -> Any:
    """Kubernetes events of the job and its pods (restarts, faults, scheduling)."""
    return await svc.job_events(ctx, cluster, job)


@router.post(BASE + "/{job}/cancel", response_model=None, status_code=202,
             responses=RESPONSES)
async def cancel_job(cluster: ClusterName, job: JobName,
                     ctx: Annotated[Ctx, Depends(ctx_for(svc.cancel_job))],
                     dry_run: DryRun = False, idempotency_key: IdempotencyKey = None,
                     body: Annotated[JobActionIn | None, Body()] = None) -> JSONResponse:
    """Stop a job (runPolicy.suspend): its pods are deleted, the job stays to be read."""
    return answer(await svc.cancel_job(ctx, cluster, job,
                                       dry_run=dry_run or bool(body and body.dry_run),
                                       idempotency_key=idempotency_key))


@router.delete(BASE + "/{job}", response_model=None, status_code=202, responses=RESPONSES)
async def delete_job(cluster: ClusterName, job: JobName,
                     ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_job))],
                     confirm: Confirm = False, dry_run: DryRun = False,
                     idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Delete a job with its pods and logs (confirm=true); bucket outputs stay."""
    return answer(await svc.delete_job(ctx, cluster, job, confirm=confirm, dry_run=dry_run,
                                       idempotency_key=idempotency_key))


@router.websocket(BASE + "/{job}/logs/stream")
async def job_log_stream(ws: WebSocket, cluster: str, job: str) -> None:
    """One WebSocket for a job view: every pod's log (or `pod`'s), multiplexed. Query:
    pod, container, follow (default true), since_seconds, tail, resume (the last `cursor`
    received, as JSON: lines already delivered per pod). Messages: lines (with the cursor),
    note, end. Closes 4401/4403/4404/4422 on refusal. A slow reader slows the pods' readers
    (bounded buffer), never grows the server's memory."""
    await ws.accept()
    try:
        ctx = Ctx(principal=await websocket_principal(ws), app=ws.app.state.podplane)
        ctx = admit(ctx, effect_of(svc.open_log_stream))  # the action's one role check
        pod, options = _stream_query(cluster, job, dict(ws.query_params))
        # a stream slot like every WebSocket's (issue 34, S3): held until the socket ends
        with limits_of(ctx.app).holding(STREAMS, ctx.principal.token_id):
            stream = await svc.open_log_stream(ctx, cluster, job, pod, options)
            await pump(ws, stream, until_token_revoked(ctx.app, ctx.principal.token_id))
    except PodplaneError as err:
        await audit_ws_limited(ws, err)  # over the stream cap (once: the rate's is marked)
        await audit_ws_refused(ws, err)  # a role check (the handshake's own is marked)
        code = _WS_CLOSE.get(err.status, 4400)
        reason = err.message[:120] if isinstance(err, InvalidInput) else err.code
        with contextlib.suppress(RuntimeError):  # already closed
            await ws.close(code=code, reason=reason)


# 4000 + the HTTP status the same refusal has over REST (a 429: rate or the stream cap).
_WS_CLOSE = {401: 4401, 403: 4403, 404: 4404, 422: 4422, 429: 4429}


NAME = re.compile(DNS_LABEL_PATTERN)


def _stream_query(cluster: str, job: str, q: dict[str, str]) -> tuple[
        str | None, job_stream.StreamOptions]:
    for what, value in (("cluster", cluster), ("job", job), ("pod", q.get("pod")),
                        ("container", q.get("container"))):
        if value is not None and not NAME.fullmatch(value):
            raise InvalidInput(f"{what} {value[:64]!r} is not a valid name.", field=what)
    try:
        resume = {str(k): int(v) for k, v in json.loads(q.get("resume") or "{}").items()}
        since = int(q["since_seconds"]) if q.get("since_seconds") else None
        tail = int(q["tail"]) if q.get("tail") else None
    except (ValueError, TypeError, AttributeError) as err:
        raise InvalidInput("resume must be a JSON object of line counts; since_seconds and "
                           "tail integers.", field="query") from err
    if any(v < 0 for v in resume.values()) or (tail is not None and tail < 1) or \
            (since is not None and since < 1):
        raise InvalidInput("resume counts must be >= 0; since_seconds and tail >= 1.",
                           field="query")
    logs_room.check_bounds(since, tail)   # as GET .../logs bounds them
    follow = q.get("follow", "true").lower() not in ("false", "0", "no")
    return q.get("pod"), job_stream.StreamOptions(q.get("container"), follow, since, tail,
                                                  resume)


async def pump(ws: WebSocket, stream: job_stream.LogStream,
               revoked: Coroutine[Any, Any, None]) -> None:
    """Send the stream's batches until it ends, the client leaves or the token is revoked
    (close 4401); each send waits for the transport (flow control), which is what holds the
    stream's readers back."""
    async def send_all() -> None:
        # aclosing: when the client leaves, the stream's readers stop now, not at GC time
        async with contextlib.aclosing(stream.batches()) as batches:
            async for message in batches:
                await ws.send_text(json.dumps(message))
        await ws.close(code=1000)

    async def until_gone() -> None:
        with contextlib.suppress(WebSocketDisconnect):
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass

    async def until_revoked() -> None:
        await revoked
        await ws.close(code=4401, reason="token_revoked")

    tasks = [asyncio.create_task(send_all()), asyncio.create_task(until_gone()),
             asyncio.create_task(until_revoked())]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(BaseException):
            await task
