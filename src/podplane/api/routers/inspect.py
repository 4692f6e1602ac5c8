"""Inspect before create: availability zones, instance types, quotas, training plans."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from podplane.api.auth import ctx_for
from podplane.services.clusters import inspect as svc
from podplane.services.context import Ctx

router = APIRouter(tags=["inspect"])
TYPE = r"^ml\.[a-z0-9.\-]+$"
AZ = r"^[a-z]{2}-[a-z]+-\d[a-z]$"


@router.get("/availability-zones", summary="The region's AZs (names and AZ ids)")
async def availability_zones(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_availability_zones))],
) -> list[dict[str, Any]]:
    return await svc.list_availability_zones(ctx)


@router.get("/instance-types", summary="Instance types offered per AZ, with facts and price")
async def instance_types(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_instance_types))],
    availability_zone: Annotated[str | None, Query(pattern=AZ)] = None,
    accelerated_only: bool = False,
) -> list[dict[str, Any]]:
    return await svc.list_instance_types(ctx, availability_zone, accelerated_only)


@router.get("/quotas", summary="SageMaker cluster-usage quota for an instance type")
async def quota(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.get_quota))],
    instance_type: Annotated[str, Query(max_length=40, pattern=TYPE)],
) -> dict[str, Any]:
    return await svc.get_quota(ctx, instance_type)


@router.get("/training-plans", summary="Training plans in the account (AZ, type, instances)")
async def training_plans(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_training_plans))],
) -> list[dict[str, Any]]:
    return await svc.list_training_plans(ctx)
