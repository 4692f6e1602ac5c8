"""Instance groups: list, get, add (202), scale (PATCH count), delete (confirm)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from podplane.api.auth import ctx_for
from podplane.api.routers.operations import OperationOut, out
from podplane.domain.instance_groups import DEFAULT_EBS_GB, MAX_COUNT, MAX_EBS_GB, CapacityType
from podplane.domain.instance_groups import NewGroup as NewGroupSpec
from podplane.services.context import Ctx
from podplane.services.groups import service as svc
from podplane.services.groups.outcome import Outcome

router = APIRouter(tags=["instance groups"])
DNS = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
ClusterName = Annotated[str, Path(min_length=1, max_length=63, pattern=DNS)]
GroupName = Annotated[str, Path(min_length=1, max_length=63, pattern=DNS)]
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", min_length=1, max_length=256, pattern=r"^[\x21-\x7e]+$",
           description="Same key + same body returns the same operation."),
]
DryRun = Annotated[bool, Query(description="Return the plan without acting.")]
Confirm = Annotated[bool, Query(description="Required for destructive changes.")]
BASE = "/clusters/{cluster}/instance-groups"


class GroupOut(BaseModel):
    name: str
    instance_type: str | None
    status: str | None
    target_count: int | None
    current_count: int | None
    capacity_type: CapacityType
    efa_only: bool
    training_plan_arn: str | None
    threads_per_core: int | None
    ebs_gb: int | None
    subnets: list[str]
    deep_health_checks: list[str]
    failure_message: str | None


class NewGroupIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=63, pattern=DNS)
    instance_type: str = Field(min_length=4, max_length=40, pattern=r"^ml\.[a-z0-9.-]+$")
    count: int = Field(ge=1, le=MAX_COUNT)
    availability_zone: str | None = Field(None, pattern=r"^[a-z]{2}-[a-z]+-\d[a-z]$",
                                          description="A training plan's AZ overrides it.")
    ebs_gb: int = Field(DEFAULT_EBS_GB, ge=1, le=MAX_EBS_GB)
    capacity_type: CapacityType = CapacityType.ON_DEMAND
    training_plan_arn: str | None = Field(None, max_length=256, pattern=r"^arn:aws[a-z-]*:"
                                          r"sagemaker:[a-z0-9-]+:\d{12}:training-plan/.+$")
    efa_only: bool = Field(False, description="EFA-only network interface (immutable).")
    subnet_id: str | None = Field(None, pattern=r"^subnet-[0-9a-f]{8,17}$")
    new_subnet: bool = Field(False, description="Create a new /20 compute subnet.")
    dry_run: bool = Field(False, description="Return the plan without acting (or ?dry_run).")


class ScaleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int | None = Field(None, ge=0, le=MAX_COUNT)
    capacity_type: CapacityType | None = Field(None, description="Immutable: refused if "
                                               "different from the group's.")
    efa_only: bool | None = Field(None, description="Immutable: refused if different.")
    dry_run: bool = Field(False, description="Return the plan without acting (or ?dry_run).")


class MutationOut(OperationOut):
    changed: bool = True
    plan: dict[str, Any]


class NoChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: dict[str, Any]


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": MutationOut, "description": "The operation that makes the change."},
    200: {"model": NoChangeOut, "description": "No change needed, or the dry-run plan."},
}


def answer(outcome: Outcome) -> JSONResponse:
    if outcome.operation is None:
        body = NoChangeOut(changed=outcome.changed, dry_run=outcome.dry_run, plan=outcome.plan)
        return JSONResponse(body.model_dump(mode="json"), status_code=200)
    op = out(outcome.operation).model_dump(mode="json")
    return JSONResponse({**op, "changed": True, "plan": outcome.plan}, status_code=202)


@router.get(BASE, response_model=list[GroupOut])
async def list_groups(cluster: ClusterName,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.list_groups))]) -> list[GroupOut]:
    return [GroupOut.model_validate(g) for g in await svc.list_groups(ctx, cluster)]


@router.get(BASE + "/{group}", response_model=GroupOut)
async def get_group(cluster: ClusterName, group: GroupName,
                    ctx: Annotated[Ctx, Depends(ctx_for(svc.get_group))]) -> GroupOut:
    return GroupOut.model_validate(await svc.get_group(ctx, cluster, group))


@router.post(BASE, response_model=None, status_code=202, responses=RESPONSES)
async def add_group(cluster: ClusterName, body: NewGroupIn,
                    ctx: Annotated[Ctx, Depends(ctx_for(svc.add_group))],
                    dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                    ) -> JSONResponse:
    """Add a group: capacity type, EFA-only and subnet placement decided together."""
    spec = NewGroupSpec(**body.model_dump(exclude={"dry_run"}))
    return answer(await svc.add_group(ctx, cluster, spec, dry_run=dry_run or body.dry_run,
                                      idempotency_key=idempotency_key))


@router.patch(BASE + "/{group}", response_model=None, status_code=202, responses=RESPONSES)
async def scale_group(cluster: ClusterName, group: GroupName, body: ScaleIn,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.scale_group))],
                      dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                      ) -> JSONResponse:
    """Scale (only `count` changes; capacity type and EFA-only are immutable)."""
    return answer(await svc.scale_group(
        ctx, cluster, group, body.count, capacity_type=body.capacity_type,
        efa_only=body.efa_only, dry_run=dry_run or body.dry_run, idempotency_key=idempotency_key))


@router.delete(BASE + "/{group}", response_model=None, status_code=202, responses=RESPONSES)
async def delete_group(cluster: ClusterName, group: GroupName,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_group))],
                       confirm: Confirm = False, dry_run: DryRun = False,
                       idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Delete a group and terminate its nodes (confirm=true)."""
    return answer(await svc.delete_group(ctx, cluster, group, confirm=confirm, dry_run=dry_run,
                                         idempotency_key=idempotency_key))
