"""Inspect before create: availability zones, instance types, quotas, training plans."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from podplane.api.auth import ctx_for
from podplane.api.routers.cluster_shapes import InstanceTypeOut, QuotaOut, TrainingPlanOut, ZoneOut
from podplane.domain.names import (
    AVAILABILITY_ZONE_PATTERN,
    INSTANCE_TYPE_MAX,
    INSTANCE_TYPE_PATTERN,
)
from podplane.services.clusters import inspect as svc
from podplane.services.context import Ctx

router = APIRouter(tags=["inspect"])
# The service builds these bodies; exclude_unset answers them key for key.
AS_BUILT: dict[str, Any] = {"response_model_exclude_unset": True}


@router.get("/availability-zones", summary="The region's AZs (names and AZ ids)",
            response_model=list[ZoneOut], **AS_BUILT)
async def availability_zones(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_availability_zones))],
) -> Any:
    return await svc.list_availability_zones(ctx)


@router.get("/instance-types", summary="Instance types offered per AZ, with facts and price",
            response_model=list[InstanceTypeOut], **AS_BUILT)
async def instance_types(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_instance_types))],
    availability_zone: Annotated[str | None, Query(pattern=AVAILABILITY_ZONE_PATTERN)] = None,
    accelerated_only: bool = False,
) -> Any:
    return await svc.list_instance_types(ctx, availability_zone, accelerated_only)


@router.get("/quotas", summary="SageMaker cluster-usage quota for an instance type",
            response_model=QuotaOut, **AS_BUILT)
async def quota(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.get_quota))],
    instance_type: Annotated[str, Query(max_length=INSTANCE_TYPE_MAX,
                                        pattern=INSTANCE_TYPE_PATTERN)],
) -> Any:
    return await svc.get_quota(ctx, instance_type)


@router.get("/training-plans", summary="Training plans in the account (AZ, type, instances)",
            response_model=list[TrainingPlanOut], **AS_BUILT)
async def training_plans(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_training_plans))],
) -> Any:
    return await svc.list_training_plans(ctx)
