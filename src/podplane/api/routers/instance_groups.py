"""Instance groups: list, get, add (202), scale (PATCH count), delete (confirm)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.api.params import ClusterName, Confirm, DryRun, GroupName, IdempotencyKey
from podplane.api.routers.operations import OperationOut, out
from podplane.domain.group_requests import NewGroupRequest, ScaleRequest
from podplane.services.context import Ctx
from podplane.services.groups import service as svc
from podplane.services.mutation import Outcome

router = APIRouter(tags=["instance groups"])
BASE = "/clusters/{cluster}/instance-groups"


# The bodies are the domain's declarations (domain.group_requests); the subclasses only keep
# the names the API has always given them.
@dataclass(frozen=True, kw_only=True)
class NewGroupIn(NewGroupRequest):
    """Add a group: capacity type, EFA-only and subnet placement are decided together."""


@dataclass(frozen=True, kw_only=True)
class ScaleIn(ScaleRequest):
    """PATCH a group: only `count` changes; the immutable fields are refused if they differ."""


@dataclass(frozen=True)
class GroupOut(svc.GroupView):
    """An instance group (the service's GroupView, under the name the API gives it)."""


class SubnetPlanOut(BaseModel):
    availability_zone: str
    action: Literal["reuse", "create", "explicit"]
    subnet_id: str | None
    cidr: str | None
    reason: str
    secondary_cidr: str | None


class AddGroupPlanOut(BaseModel):
    availability_zone: str
    az_adopted_from_training_plan: bool
    subnet: SubnetPlanOut
    instance_group: dict[str, Any] = Field(
        description="The group as UpdateCluster receives it (SageMaker "
        "ClusterInstanceGroupSpecification).")
    notes: list[str]


class ScaleGroupPlanOut(BaseModel):
    group: str
    count_from: int | None
    count_to: int | None
    fields_sent: list[str]
    other_groups_resubmitted_unchanged: list[str]


class DeleteGroupPlanOut(BaseModel):
    group: str
    nodes_terminated: int
    warning: str


class NodeActionPlanOut(BaseModel):
    node: str
    instance_group: str
    status: str
    action: Literal["reboot", "replace", "delete"]
    note: str | None = None
    warning: str | None = None


ChangePlan = AddGroupPlanOut | ScaleGroupPlanOut | DeleteGroupPlanOut | NodeActionPlanOut


class MutationOut(OperationOut):
    changed: bool = True
    plan: ChangePlan


class NoChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: ChangePlan


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": MutationOut, "description": "The operation that makes the change."},
    200: {"model": NoChangeOut, "description": "No change needed, or the dry-run plan."},
}


def answer(outcome: Outcome) -> JSONResponse:
    if outcome.operation is None:
        body = {"changed": outcome.changed, "dry_run": outcome.dry_run, "plan": outcome.plan}
        return JSONResponse(jsonable_encoder(body), status_code=200)
    op = out(outcome.operation).model_dump(mode="json")
    return JSONResponse({**op, "changed": True, "plan": outcome.plan}, status_code=202)


@router.get(BASE, response_model=list[GroupOut])
async def list_groups(cluster: ClusterName,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.list_groups))]) -> Any:
    return [asdict(g) for g in await svc.list_groups(ctx, cluster)]


@router.get(BASE + "/{group}", response_model=GroupOut)
async def get_group(cluster: ClusterName, group: GroupName,
                    ctx: Annotated[Ctx, Depends(ctx_for(svc.get_group))]) -> Any:
    return asdict(await svc.get_group(ctx, cluster, group))


@router.post(BASE, response_model=None, status_code=202, responses=RESPONSES)
async def add_group(cluster: ClusterName, body: NewGroupIn,
                    ctx: Annotated[Ctx, Depends(ctx_for(svc.add_group))],
                    dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                    ) -> JSONResponse:
    """Add a group: capacity type, EFA-only and subnet placement decided together."""
    return answer(await svc.add_group(ctx, cluster, body.group(), dry_run=dry_run or body.dry_run,
                                      idempotency_key=idempotency_key))


@router.patch(BASE + "/{group}", response_model=None, status_code=202, responses=RESPONSES)
async def scale_group(cluster: ClusterName, group: GroupName, body: ScaleIn,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.scale_group))],
                      confirm: Confirm = False, dry_run: DryRun = False,
                      idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Scale (only `count` changes; capacity type and EFA-only are immutable). A scale-down
    terminates instances: it needs the admin role and confirm=true."""
    return answer(await svc.scale_group(
        ctx, cluster, group, body.count, capacity_type=body.capacity_type,
        efa_only=body.efa_only, confirm=confirm or body.confirm, dry_run=dry_run or body.dry_run,
        idempotency_key=idempotency_key))


@router.delete(BASE + "/{group}", response_model=None, status_code=202, responses=RESPONSES)
async def delete_group(cluster: ClusterName, group: GroupName,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_group))],
                       confirm: Confirm = False, dry_run: DryRun = False,
                       idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Delete a group and terminate its nodes (confirm=true)."""
    return answer(await svc.delete_group(ctx, cluster, group, confirm=confirm, dry_run=dry_run,
                                         idempotency_key=idempotency_key))
