"""`GET /doctor`: what this AWS account lacks for a create (read-only; viewers may call it)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.domain.names import EKS_CLUSTER_PATTERN, INSTANCE_TYPE_MAX, INSTANCE_TYPE_PATTERN
from podplane.services.context import Ctx
from podplane.services.diagnostics import doctor as svc

router = APIRouter(tags=["doctor"])
Status = Literal["ok", "warn", "fail"]


class FindingOut(BaseModel):
    check: str = Field(description="credentials, region, service_linked_role, permissions, "
                       "quota or access_entry")
    status: Status
    detail: str
    fix: str = Field("", description="What to do about it (empty when ok).")


class DoctorOut(BaseModel):
    status: Status = Field(description="The worst finding's status.")
    findings: list[FindingOut]


@router.get("/doctor", response_model=DoctorOut,
            summary="Check the AWS account for what a cluster create needs")
async def doctor(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.run_doctor))],
    instance_type: Annotated[str | None, Query(max_length=INSTANCE_TYPE_MAX,
                                                         pattern=INSTANCE_TYPE_PATTERN)
                             ] = None,
    count: Annotated[int, Query(ge=1, le=1000)] = 1,
    cluster: Annotated[str | None, Query(max_length=100,
                                         pattern=EKS_CLUSTER_PATTERN)] = None,
) -> DoctorOut:
    return DoctorOut.model_validate(await svc.run_doctor(ctx, instance_type, count, cluster))
