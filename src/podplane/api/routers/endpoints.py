"""Inference endpoints: create (202), list, get, scale or update (PATCH), delete (confirm),
invoke."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from podplane.api.auth import ACTION_STATE, app_state, ctx_for, current_principal
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
from podplane.api.routers.jobs import PodLogPageOut, answer
from podplane.api.routers.operations import MadeAlreadyOut, OperationOut
from podplane.domain.errors import InvalidInput
from podplane.domain.inference.requests import (
    ENDPOINT_NAME_MAX,
    MAX_REPLICAS,
    UPDATABLE,
    EndpointRequest,
    EndpointUpdate,
)
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.services import pod_logs
from podplane.services.context import Ctx
from podplane.services.inference import logs as endpoint_logs_room
from podplane.services.inference import service as svc
from podplane.services.inference.service import InvokeRequest
from podplane.services.registry import admit, effect_of

router = APIRouter(tags=["endpoints"])
EndpointName = Annotated[str, Path(min_length=1, max_length=ENDPOINT_NAME_MAX,
                                   pattern=DNS_LABEL_PATTERN)]
BASE = "/clusters/{cluster}/endpoints"


@dataclass(frozen=True, kw_only=True)
class EndpointIn(EndpointRequest):
    """Deploy a model with vLLM or SGLang onto one instance group."""


@dataclass(frozen=True, kw_only=True)
class InvokeIn(InvokeRequest):
    """A small test request (completions, or chat with chat=true)."""


@dataclass(frozen=True, kw_only=True)
class EndpointPatchIn(EndpointUpdate):
    """`replicas` alone scales; the other fields update the pod template (not both at once)."""

    replicas: Annotated[int | None, Field(ge=0, le=MAX_REPLICAS, description=(
        "Pods wanted (0 stops serving)."))] = None


class ManagedAutoscalingOut(BaseModel):
    min_replicas: int | None
    max_replicas: int | None
    trigger: str | None = Field(description="prometheus or cloudwatch.")


class EndpointSummaryOut(BaseModel):
    name: str
    kind: str = Field("self_managed", description="self_managed or managed.")
    engine: str
    image: str | None
    model: str | None
    tensor_parallel: int | None
    pipeline_parallel: int
    max_model_len: int | None
    dtype: str | None
    replicas: int
    ready_replicas: int
    status: str = Field(description="Ready, Progressing or Stopped.")
    exposure: str
    port: int | None
    router: str | None = Field(None, description="SGLang router policy, if any.")
    pool: str | None = Field(None, description=(
        "The warm pool whose pods serve it (pool assign scales it), if any."))
    created_at: str | None
    state: str | None = Field(None, description="Managed: the operator's status.state.")
    routing: str | None = Field(None, description="Managed: intelligent routing strategy.")
    kv_cache: str | None = Field(None, description="Managed: off, l1, tieredstorage, redis.")
    autoscaling: ManagedAutoscalingOut | None = None


class EndpointPodOut(BaseModel):
    name: str
    phase: str
    node: str | None
    ready: bool


class AutoscalingOut(ManagedAutoscalingOut):
    """podplane's KEDA ScaledObject and what KEDA's HPA last computed (self-managed)."""

    metric: str | None = Field(description="The engine's gauge KEDA reads.")
    target: str | None = Field(description="Per pod.")
    cooldown_seconds: int | None
    hpa: str | None
    desired_replicas: int | None
    current_metric: str | None = Field(description="Per pod, as the HPA last read it.")


class EndpointOut(EndpointSummaryOut):
    service: str | None
    load_balancer: str | None = Field(description="The load balancer's hostname, if any.")
    message: str | None = Field(None, description="Managed: the operator's last message.")
    pods: list[EndpointPodOut]
    autoscaling: AutoscalingOut | None = None
    router_pods: list[EndpointPodOut] = Field(default_factory=list, description=(
        "The SGLang router's pods (Service target), if any."))


class InvokeOut(BaseModel):
    endpoint: str
    path: str
    status: int
    ready_replicas: int
    response: dict[str, Any] = Field(description=(
        "The engine's answer: OpenAI-compatible, or the LMI container's (JumpStart)."))


class CreatePlanOut(BaseModel):
    """What a create would deploy (services/inference/service.create_endpoint)."""

    endpoint: str
    engine: str
    image: str
    instance_group: str
    instance_type: str | None
    gpus_per_node: int | None
    replicas: int
    gpus_requested: int
    gpus_free: int
    exposure: str
    router: str | None = None
    manifests: list[dict[str, Any]] = Field(description=(
        "The Deployment, Service (and ScaledObject, router objects) as applied."))
    warnings: list[str] | None = Field(None, description=(
        "autoscaling.max_replicas beyond the GPUs free now (not refused)."))


class ScalePlanOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    endpoint: str
    from_: int = Field(alias="from", description="Replicas now.")
    to: int
    gpus_free: int | None = None


class UpdateChangeOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str | int | None = Field(alias="from")
    to: str | int | None


class UpdatePlanOut(BaseModel):
    """What an update changes (services/inference/service.update_endpoint)."""

    endpoint: str
    changes: dict[str, UpdateChangeOut] = Field(description="Field -> {from, to}.")
    replicas: int | None = None
    gpus_free: int | None = None
    steps: list[str] | None = None
    manifest: dict[str, Any] | None = Field(None, description="The Deployment as applied.")


class DeletePlanOut(BaseModel):
    endpoint: str
    action: str
    warning: str


class AutoscaleChangeOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: AutoscalingOut | None = Field(alias="from", description="As endpoint get showed.")
    to: dict[str, Any] | None = Field(description="The ScaledObject applied; null: stopped.")


class AutoscalePlanOut(BaseModel):
    endpoint: str
    autoscaling: AutoscaleChangeOut
    warnings: list[str] | None = Field(None, description=(
        "max_replicas beyond the GPUs free now (not refused)."))


EndpointPlan = (CreatePlanOut | ScalePlanOut | UpdatePlanOut | DeletePlanOut | AutoscalePlanOut
                | MadeAlreadyOut)


class EndpointMutationOut(OperationOut):
    changed: bool = True
    plan: EndpointPlan | dict[str, str]  # {} when an idempotency key replays the start


class EndpointNoChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: EndpointPlan


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": EndpointMutationOut, "description": "The operation that makes the change."},
    200: {"model": EndpointNoChangeOut, "description": "No change needed, or the dry-run plan."},
}


@router.get(BASE, response_model=list[EndpointSummaryOut])
async def list_endpoints(cluster: ClusterName,
                         ctx: Annotated[Ctx, Depends(ctx_for(svc.list_endpoints))]) -> Any:
    """The endpoints podplane deployed on the cluster, with ready replicas."""
    return await svc.list_endpoints(ctx, cluster)


@router.post(BASE, response_model=None, status_code=202, responses=RESPONSES)
async def create_endpoint(cluster: ClusterName, body: EndpointIn,
                          ctx: Annotated[Ctx, Depends(ctx_for(svc.create_endpoint))],
                          dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                          ) -> JSONResponse:
    """Deploy a model: group, GPUs per node vs tensor parallelism and name checked first."""
    request = EndpointRequest(**{**body.__dict__, "dry_run": dry_run or body.dry_run})
    return answer(await svc.create_endpoint(ctx, cluster, request,
                                            idempotency_key=idempotency_key))


@router.get(BASE + "/{name}", response_model=EndpointOut)
async def get_endpoint(cluster: ClusterName, name: EndpointName,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.get_endpoint))]) -> Any:
    """The endpoint as Kubernetes shows it: spec, ready replicas, pods, Service."""
    return await svc.get_endpoint(ctx, cluster, name)


def _admit_by_body() -> Callable[[Request], Awaitable[Ctx]]:
    """PATCH admits the action its body asks for, before the body is validated (as ctx_for
    does for one action): update when it names a template field or is an object without
    `replicas`; scale otherwise (`replicas` alone, or no body: what this PATCH always was).
    Both need the operator role."""
    scale, update = effect_of(svc.scale_endpoint), effect_of(svc.update_endpoint)

    async def dependency(request: Request) -> Ctx:
        try:
            body = await request.json()
        except ValueError:
            body = None
        updates = isinstance(body, dict) and (bool(set(body) & set(UPDATABLE))
                                              or "replicas" not in body)
        spec = update if updates else scale
        setattr(request.state, ACTION_STATE, spec.action)  # for the audit of a refusal
        return admit(Ctx(principal=await current_principal(request),
                         app=app_state(request)), spec)

    dependency.__podplane_service__ = update  # type: ignore[attr-defined]  # route tables
    return dependency


@router.patch(BASE + "/{name}", response_model=None, status_code=202, responses=RESPONSES)
async def patch_endpoint(cluster: ClusterName, name: EndpointName, body: EndpointPatchIn,
                         ctx: Annotated[Ctx, Depends(_admit_by_body())], dry_run: DryRun = False,
                         idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """`replicas` alone: scale; the operation ends when exactly that many pods are Ready.
    Template fields: a rolling update (old pods serve until new ones are Ready) ending with
    one real request; a failure rolls back and the operation says why. Same values: 200,
    changed=false."""
    fields = {k: v for k, v in body.__dict__.items() if k != "replicas"}
    update = EndpointUpdate(**{**fields, "dry_run": dry_run or body.dry_run})
    if body.replicas is not None:
        if update.changes() or update.autoscaling is not None:
            raise InvalidInput("Scale (replicas) and update the template in separate "
                               "requests.", field="replicas")
        return answer(await svc.scale_endpoint(ctx, cluster, name, body.replicas,
                                               dry_run=update.dry_run,
                                               idempotency_key=idempotency_key))
    if not update.changes() and update.autoscaling is None:
        raise InvalidInput("Name replicas, autoscaling, or one of " + ", ".join(UPDATABLE)
                           + ".",
                           field="replicas")
    return answer(await svc.update_endpoint(ctx, cluster, name, update,
                                            idempotency_key=idempotency_key))


@router.delete(BASE + "/{name}", response_model=None, status_code=202, responses=RESPONSES)
async def delete_endpoint(cluster: ClusterName, name: EndpointName,
                          ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_endpoint))],
                          confirm: Confirm = False, dry_run: DryRun = False,
                          idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Delete the endpoint's Deployment, pods and Service (confirm=true)."""
    return answer(await svc.delete_endpoint(ctx, cluster, name, confirm=confirm,
                                            dry_run=dry_run, idempotency_key=idempotency_key))


@router.post(BASE + "/{name}/invoke", response_model=InvokeOut)
async def invoke_endpoint(cluster: ClusterName, name: EndpointName, body: InvokeIn,
                          ctx: Annotated[Ctx, Depends(ctx_for(svc.invoke_endpoint))]) -> Any:
    """One small OpenAI-compatible request through the Kubernetes API server's service proxy
    (operator: it spends GPU time). 503 when no pod is Ready."""
    request = InvokeRequest(**body.__dict__)
    return await svc.invoke_endpoint(ctx, cluster, name, request)



class EndpointLogPageOut(PodLogPageOut):
    endpoint: str


@router.get(BASE + "/{name}/logs", response_model=EndpointLogPageOut)
async def endpoint_logs(cluster: ClusterName, name: EndpointName,
                        ctx: Annotated[Ctx, Depends(ctx_for(endpoint_logs_room.endpoint_logs))],
                        pod: LogPod = None, container: LogContainer = None,
                        since_seconds: LogSince = None, tail: LogTail = None,
                        cursor: LogCursor = 0, limit: LogLimit = pod_logs.PAGE) -> Any:
    """Logs of the endpoint's engine pods and router pods (or one pod), bounded and paged
    with `cursor`, whichever kind serves it (self-managed, operator, warm pool)."""
    return await endpoint_logs_room.endpoint_logs(ctx, cluster, name, pod, container,
                                                  since_seconds, tail, cursor, limit)
