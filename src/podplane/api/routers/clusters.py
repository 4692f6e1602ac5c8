"""Clusters: plan, create (202 operation | 200 unchanged), list, status, import, delete, and the
caller's current-cluster preference."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.api.routers.operations import IdempotencyKey, OperationOut, out
from podplane.domain.clusters import ClusterSpec
from podplane.domain.instance_groups import CapacityType
from podplane.services.clusters import service as svc
from podplane.services.context import Ctx

router = APIRouter(tags=["clusters"])
CLUSTER_NAME = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
ClusterPath = Annotated[str, Path(min_length=1, max_length=63, pattern=CLUSTER_NAME)]
AZ = r"^[a-z]{2}-[a-z]+-\d[a-z]$"


class ClusterIn(BaseModel):
    """Only decisions: everything else is derived and shown in the plan."""

    name: str = Field(min_length=1, max_length=63, pattern=CLUSTER_NAME)
    region: str = Field("us-west-2", pattern=r"^[a-z]{2}-[a-z]+-\d$")
    availability_zone: str = Field(pattern=AZ)
    instance_type: str = Field(min_length=4, max_length=40, pattern=r"^ml\.[a-z0-9.\-]+$")
    count: int = Field(ge=1, le=1000)
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    training_plan_arn: str | None = Field(None, max_length=256,
                                          pattern=r"^arn:aws[a-z-]*:sagemaker:[^\s]+$")
    deep_health_checks: bool = Field(True, description="On-start deep health checks "
                                     "(stress + connectivity). On unless you turn them off.")
    override_warnings: list[Annotated[str, Field(max_length=64, pattern=r"^[a-z_]+$")]] = Field(
        default_factory=list, max_length=10,
        description="Pre-flight warnings you accept, e.g. training_plan_az_adopted.")

    def spec(self) -> ClusterSpec:
        return ClusterSpec(self.name, self.region, self.availability_zone, self.instance_type,
                           self.count, self.capacity_type, self.training_plan_arn,
                           self.deep_health_checks)


class UnchangedOut(BaseModel):
    changed: bool = False
    plan: list[Any] = Field(default_factory=list)


class ImportIn(BaseModel):
    name: str = Field(min_length=1, max_length=63, pattern=CLUSTER_NAME)
    eks_cluster_name: str | None = Field(None, max_length=100,
                                         pattern=r"^[0-9A-Za-z][A-Za-z0-9\-_]*$")
    hyperpod_cluster_name: str | None = Field(None, max_length=63,
                                              pattern=r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


class CurrentClusterIn(BaseModel):
    name: str | None = Field(None, max_length=63, pattern=CLUSTER_NAME)


class CurrentClusterOut(BaseModel):
    name: str | None


@router.post("/cluster-plans", summary="Plan a cluster (dry run, nothing is created)")
async def plan_cluster(body: ClusterIn,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.plan_create))]) -> dict[str, Any]:
    return await svc.plan_create(ctx, body.spec())


@router.post("/clusters", status_code=202, response_model=OperationOut,
             responses={200: {"model": UnchangedOut,
                              "description": "The cluster exists as asked: nothing to do."}})
async def create_cluster(
    body: ClusterIn, ctx: Annotated[Ctx, Depends(ctx_for(svc.create_cluster))],
    idempotency_key: IdempotencyKey = None, dry_run: bool = False,
) -> Any:
    if dry_run:
        return JSONResponse(await svc.plan_create(ctx, body.spec()), status_code=200)
    result = await svc.create_cluster(ctx, body.spec(), body.override_warnings, idempotency_key)
    if result.operation is None:
        return JSONResponse(UnchangedOut(plan=result.plan).model_dump(), status_code=200)
    return out(result.operation)


@router.get("/clusters")
async def list_clusters(ctx: Annotated[Ctx, Depends(ctx_for(svc.list_clusters))]) -> dict[str, Any]:
    return await svc.list_clusters(ctx)


@router.post("/clusters/import", status_code=202, response_model=OperationOut)
async def import_cluster(body: ImportIn,
                         ctx: Annotated[Ctx, Depends(ctx_for(svc.import_cluster))],
                         idempotency_key: IdempotencyKey = None) -> OperationOut:
    return out(await svc.import_cluster(ctx, body.name, body.eks_cluster_name,
                                        body.hyperpod_cluster_name, idempotency_key))


@router.get("/clusters/{cluster}")
async def get_cluster(cluster: ClusterPath,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.get_cluster))]) -> dict[str, Any]:
    return await svc.get_cluster(ctx, cluster)


@router.delete("/clusters/{cluster}", status_code=202, response_model=OperationOut)
async def delete_cluster(
    cluster: ClusterPath, ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_cluster))],
    force: Annotated[bool, Query(description="Also delete resources not tagged as "
                                 "created by podplane.")] = False,
    delete_resources: Annotated[bool | None, Query(
        description="Delete cloud resources (default: yes for created clusters; imported "
        "ones are only detached).")] = None,
    idempotency_key: IdempotencyKey = None,
) -> OperationOut:
    return out(await svc.delete_cluster(ctx, cluster, force, delete_resources,
                                        idempotency_key))


@router.get("/preferences/current-cluster", response_model=CurrentClusterOut)
async def get_current_cluster(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.get_current_cluster))]) -> CurrentClusterOut:
    return CurrentClusterOut(name=await svc.get_current_cluster(ctx))


@router.put("/preferences/current-cluster", response_model=CurrentClusterOut)
async def set_current_cluster(
    body: CurrentClusterIn,
    ctx: Annotated[Ctx, Depends(ctx_for(svc.set_current_cluster))]) -> CurrentClusterOut:
    return CurrentClusterOut(name=await svc.set_current_cluster(ctx, body.name))
