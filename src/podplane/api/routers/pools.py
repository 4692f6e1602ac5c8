"""Warm pools: create (202), list, get, scale (PATCH), assign pods to an endpoint, delete."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from podplane.api.auth import ctx_for
from podplane.api.params import ClusterName, Confirm, DryRun, IdempotencyKey
from podplane.api.routers.jobs import answer
from podplane.api.routers.operations import MadeAlreadyOut, OperationOut
from podplane.domain.inference.pool_requests import AssignRequest, PoolRequest
from podplane.domain.inference.requests import MAX_REPLICAS
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.services.context import Ctx
from podplane.services.inference import pool as svc

router = APIRouter(tags=["pools"])
PoolName = Annotated[str, Path(min_length=1, max_length=40, pattern=DNS_LABEL_PATTERN)]
BASE = "/clusters/{cluster}/pools"


@dataclass(frozen=True, kw_only=True)
class PoolIn(PoolRequest):
    """Warm engine pods of one model, assigned to endpoints by label."""


@dataclass(frozen=True, kw_only=True)
class AssignIn(AssignRequest):
    """Give an endpoint `pods` of the pool's pods; fewer drains the extra ones first."""


class PoolScaleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replicas: int = Field(ge=0, le=MAX_REPLICAS, description="Pods wanted.")
    dry_run: bool = False


class PoolPodOut(BaseModel):
    name: str
    uid: str
    ready: bool
    node: str | None
    assigned: str | None = Field(description="The endpoint it serves, if any.")
    draining: str | None = Field(description="The endpoint it is draining from, if any.")
    leaving: bool


class PoolOut(BaseModel):
    name: str
    engine: str | None
    image: str | None
    model: str | None
    instance_group: str | None
    replicas: int
    ready: int
    free: int = Field(description="Pods neither assigned nor draining.")
    assigned: list[str] = Field(description="Endpoints served by the pool.")
    pods: list[PoolPodOut]


class PoolPlanOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    pool: str
    from_: int | None = Field(None, alias="from")
    to: int | None = None
    replicas: int | None = None
    endpoint: str | None = None
    remove: list[str] | None = Field(None, description="The free pods a scale-in removes.")
    gpus_free: int | None = None
    action: str | None = None
    manifest: dict[str, Any] | None = Field(None, description="The Deployment as applied.")
    service: dict[str, Any] | None = Field(None, description="The endpoint's Service.")


class PoolMutationOut(OperationOut):
    changed: bool = True
    plan: PoolPlanOut | dict[str, str]


class PoolNoChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: PoolPlanOut | MadeAlreadyOut


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": PoolMutationOut, "description": "The operation that makes the change."},
    200: {"model": PoolNoChangeOut, "description": "No change needed, or the dry-run plan."},
}


@router.get(BASE, response_model=list[PoolOut])
async def list_pools(cluster: ClusterName,
                     ctx: Annotated[Ctx, Depends(ctx_for(svc.list_pools))]) -> Any:
    """The warm pools on the cluster, with free and assigned pods."""
    return await svc.list_pools(ctx, cluster)


@router.post(BASE, response_model=None, status_code=202, responses=RESPONSES)
async def create_pool(cluster: ClusterName, body: PoolIn,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.create_pool))],
                      dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                      ) -> JSONResponse:
    """Start warm engine pods (GPUs checked first); endpoints are assigned to them later."""
    request = PoolRequest(**{**body.__dict__, "dry_run": dry_run or body.dry_run})
    return answer(await svc.create_pool(ctx, cluster, request,
                                        idempotency_key=idempotency_key))


@router.get(BASE + "/{name}", response_model=PoolOut)
async def get_pool(cluster: ClusterName, name: PoolName,
                   ctx: Annotated[Ctx, Depends(ctx_for(svc.get_pool))]) -> Any:
    """The pool and each pod: Ready, node, the endpoint it serves or drains from."""
    return await svc.get_pool(ctx, cluster, name)


@router.patch(BASE + "/{name}", response_model=None, status_code=202, responses=RESPONSES)
async def scale_pool(cluster: ClusterName, name: PoolName, body: PoolScaleIn,
                     ctx: Annotated[Ctx, Depends(ctx_for(svc.scale_pool))],
                     dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                     ) -> JSONResponse:
    """Scale the pool. Scale-in removes free pods only; one that would remove an assigned or
    draining pod is refused (409 pool_pods_assigned: unassign first, which drains it)."""
    return answer(await svc.scale_pool(ctx, cluster, name, body.replicas,
                                       dry_run=dry_run or body.dry_run,
                                       idempotency_key=idempotency_key))


@router.post(BASE + "/{name}/assign", response_model=None, status_code=202,
             responses=RESPONSES)
async def assign(cluster: ClusterName, name: PoolName, body: AssignIn,
                 ctx: Annotated[Ctx, Depends(ctx_for(svc.assign))],
                 idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Give endpoint `endpoint` `pods` pods (a Service selecting them by label; no pod
    starts). Fewer pods: the extra ones leave the Service, then drain; 0 removes the
    Service. Invoke it as any endpoint (POST .../endpoints/{endpoint}/invoke)."""
    return answer(await svc.assign(ctx, cluster, name, AssignRequest(**body.__dict__),
                                   idempotency_key=idempotency_key))


@router.delete(BASE + "/{name}", response_model=None, status_code=202, responses=RESPONSES)
async def delete_pool(cluster: ClusterName, name: PoolName,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_pool))],
                      confirm: Confirm = False, dry_run: DryRun = False,
                      idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Delete the pool (confirm=true); refused while it serves an endpoint."""
    return answer(await svc.delete_pool(ctx, cluster, name, confirm=confirm, dry_run=dry_run,
                                        idempotency_key=idempotency_key))
