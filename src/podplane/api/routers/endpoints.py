"""Inference endpoints: create (202), list, get, scale, delete (confirm), invoke."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from podplane.api.auth import ctx_for
from podplane.api.routers.instance_groups import ClusterName, Confirm, DryRun, IdempotencyKey
from podplane.api.routers.jobs import answer
from podplane.api.routers.operations import OperationOut
from podplane.domain.inference.requests import ENDPOINT_NAME_MAX, MAX_REPLICAS, EndpointRequest
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.services.context import Ctx
from podplane.services.inference import service as svc
from podplane.services.inference.service import InvokeRequest

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


class EndpointScaleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replicas: int = Field(ge=0, le=MAX_REPLICAS, description="Pods wanted (0 stops serving).")
    dry_run: bool = False


class EndpointSummaryOut(BaseModel):
    name: str
    engine: str
    image: str | None
    model: str | None
    tensor_parallel: int | None
    max_model_len: int | None
    dtype: str | None
    replicas: int
    ready_replicas: int
    status: str = Field(description="Ready, Progressing or Stopped.")
    exposure: str
    port: int | None
    created_at: str | None


class EndpointPodOut(BaseModel):
    name: str
    phase: str
    node: str | None
    ready: bool


class EndpointOut(EndpointSummaryOut):
    service: str | None
    load_balancer: str | None = Field(description="The load balancer's hostname, if any.")
    pods: list[EndpointPodOut]


class InvokeOut(BaseModel):
    endpoint: str
    path: str
    status: int
    ready_replicas: int
    response: dict[str, Any] = Field(description="The engine's OpenAI-compatible answer.")


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
    manifests: list[dict[str, Any]] = Field(description="The Deployment and Service as applied.")


class ScalePlanOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    endpoint: str
    from_: int = Field(alias="from", description="Replicas now.")
    to: int
    gpus_free: int | None = None


class DeletePlanOut(BaseModel):
    endpoint: str
    action: str
    warning: str


EndpointPlan = CreatePlanOut | ScalePlanOut | DeletePlanOut


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


@router.patch(BASE + "/{name}", response_model=None, status_code=202, responses=RESPONSES)
async def scale_endpoint(cluster: ClusterName, name: EndpointName, body: EndpointScaleIn,
                         ctx: Annotated[Ctx, Depends(ctx_for(svc.scale_endpoint))],
                         dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                         ) -> JSONResponse:
    """Scale to `replicas`; the operation ends when exactly that many pods are Ready."""
    return answer(await svc.scale_endpoint(ctx, cluster, name, body.replicas,
                                           dry_run=dry_run or body.dry_run,
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

