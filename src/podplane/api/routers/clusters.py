"""Clusters: plan, create (202 operation | 200 unchanged), list, status, import, delete, and the
caller's current-cluster preference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from podplane.api.auth import ctx_for
from podplane.api.params import DryRun, IdempotencyKey
from podplane.api.routers.cluster_shapes import (
    ClusterListOut,
    ClusterPlanOut,
    ClusterStatusOut,
    LeftAloneOut,
    ReconcilePlanOut,
    ReconcileStepOut,
    UnchangedOut,
)
from podplane.api.routers.operations import OperationOut, out
from podplane.domain.clusters import ClusterName, ClusterRequest, ImportRequest
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN
from podplane.services.clusters import reconcile as reconcile_svc
from podplane.services.clusters import service as svc
from podplane.services.context import Ctx

router = APIRouter(tags=["clusters"])
ClusterPath = Annotated[str, Path(min_length=1, max_length=DNS_LABEL_MAX,
                                  pattern=DNS_LABEL_PATTERN)]


# The bodies are the domain's declarations (fields and rules written once, in domain.clusters);
# the subclasses only keep the names the API has always given them.
@dataclass(frozen=True, kw_only=True)
class ClusterIn(ClusterRequest):
    """Only decisions: everything else is derived and shown in the plan."""


@dataclass(frozen=True, kw_only=True)
class ImportIn(ImportRequest):
    """An existing EKS cluster (and its HyperPod cluster) to manage under `name`."""


# The services build these bodies as plain JSON; answering them with exclude_unset keeps every
# key the service wrote and adds none.
AS_BUILT: dict[str, Any] = {"response_model_exclude_unset": True}


class ReconcileIn(BaseModel):
    """Optional body (MCP sends its arguments here); the query parameter does the same."""

    dry_run: bool = False


class CurrentClusterIn(BaseModel):
    name: ClusterName | None = None


class CurrentClusterOut(BaseModel):
    name: str | None


@router.post("/cluster-plans", summary="Plan a cluster (dry run, nothing is created)",
             response_model=ClusterPlanOut, **AS_BUILT)
async def plan_cluster(body: ClusterIn,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.plan_create))]) -> Any:
    return await svc.plan_create(ctx, body.spec())


@router.post("/clusters", status_code=202, response_model=OperationOut,
             responses={200: {"model": UnchangedOut | ClusterPlanOut,
                              "description": "The cluster exists as asked (nothing to do), "
                              "or the plan (dry_run=true)."}})
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


@router.get("/clusters", response_model=ClusterListOut, **AS_BUILT)
async def list_clusters(ctx: Annotated[Ctx, Depends(ctx_for(svc.list_clusters))]) -> Any:
    return await svc.list_clusters(ctx)


@router.post("/clusters/import", status_code=202, response_model=OperationOut,
             responses={200: {"model": UnchangedOut, "description": "This same import made "
                              "the cluster podplane manages under that name: nothing to do."}})
async def import_cluster(body: ImportIn,
                         ctx: Annotated[Ctx, Depends(ctx_for(svc.import_cluster))],
                         idempotency_key: IdempotencyKey = None) -> Any:
    result = await svc.import_cluster(ctx, body.name, body.eks_cluster_name,
                                      body.hyperpod_cluster_name, idempotency_key)
    if result.operation is None:
        return JSONResponse(UnchangedOut(plan=result.plan).model_dump(), status_code=200)
    return out(result.operation)


@router.get("/clusters/{cluster}", response_model=ClusterStatusOut, **AS_BUILT)
async def get_cluster(cluster: ClusterPath,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.get_cluster))]) -> Any:
    return await svc.get_cluster(ctx, cluster)


def _plan_out(result: reconcile_svc.ReconcileResult) -> ReconcilePlanOut:
    return ReconcilePlanOut(
        changed=result.changed,
        plan=[ReconcileStepOut(**s) for s in reconcile_svc.plan_json(result.plan)],
        left_alone=[LeftAloneOut(unit=a.key, kind=a.kind, reason=a.reason)
                    for a in result.plan.left_alone])


@router.post("/clusters/{cluster}/reconcile", status_code=202, response_model=OperationOut,
             summary="Put a degraded cluster's drifted dependencies back",
             responses={200: {"model": ReconcilePlanOut,
                              "description": "Nothing drifted (changed: false, no operation), "
                              "or the plan in dependency order (dry_run=true)."}})
async def reconcile_cluster(
    cluster: ClusterPath, ctx: Annotated[Ctx, Depends(ctx_for(reconcile_svc.reconcile_cluster))],
    idempotency_key: IdempotencyKey = None,
    dry_run: DryRun = False,
    body: Annotated[ReconcileIn | None, Body()] = None,
) -> Any:
    if dry_run or (body and body.dry_run):
        planned = await reconcile_svc.plan_reconcile(ctx, cluster)
        return JSONResponse(_plan_out(planned).model_dump(), status_code=200)
    result = await reconcile_svc.reconcile_cluster(ctx, cluster, idempotency_key)
    if result.operation is None:
        return JSONResponse(_plan_out(result).model_dump(), status_code=200)
    return out(result.operation)


@router.delete("/clusters/{cluster}", status_code=202, response_model=OperationOut)
async def delete_cluster(
    cluster: ClusterPath, ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_cluster))],
    force: Annotated[bool, Query(description="Also delete resources not tagged as "
                                 "created by podplane.")] = False,
    delete_resources: Annotated[bool | None, Query(
        description="Delete cloud resources (default: yes for created clusters; imported "
        "ones are only detached).")] = None,
    confirm: Annotated[bool, Query(description="Required: the cluster is torn down "
                                   "(or detached).")] = False,
    idempotency_key: IdempotencyKey = None,
) -> OperationOut:
    return out(await svc.delete_cluster(ctx, cluster, force, delete_resources,
                                        idempotency_key, confirm=confirm))


@router.get("/preferences/current-cluster", response_model=CurrentClusterOut)
async def get_current_cluster(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.get_current_cluster))]) -> CurrentClusterOut:
    return CurrentClusterOut(name=await svc.get_current_cluster(ctx))


@router.put("/preferences/current-cluster", response_model=CurrentClusterOut)
async def set_current_cluster(
    body: CurrentClusterIn,
    ctx: Annotated[Ctx, Depends(ctx_for(svc.set_current_cluster))]) -> CurrentClusterOut:
    return CurrentClusterOut(name=await svc.set_current_cluster(ctx, body.name))
