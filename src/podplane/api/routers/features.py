"""Managed features of a cluster: list, get, set (PATCH or PUT with only what changes)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from podplane.api.auth import ctx_for
from podplane.api.params import ClusterName, Confirm, DryRun, IdempotencyKey
from podplane.api.routers.instance_groups import answer
from podplane.api.routers.operations import OperationOut
from podplane.domain.features.catalog import SettingValue
from podplane.domain.features.requests import (
    FEATURE_NAME_PATTERN,
    FeatureChangeRequest,
    FeaturePlanRequest,
)
from podplane.services.context import Ctx
from podplane.services.features import service as svc

router = APIRouter(tags=["features"])
Feature = Annotated[str, Path(min_length=1, max_length=64, pattern=FEATURE_NAME_PATTERN)]
BASE = "/clusters/{cluster}/features"


@dataclass(frozen=True, kw_only=True)
class FeatureChangeIn(FeatureChangeRequest):
    """Switch a feature and/or change its settings (only what changes)."""


@dataclass(frozen=True)
class FeatureOut(svc.FeatureView):
    """A feature on a cluster: desired, observed, drift, dependencies."""


class FeatureActionOut(BaseModel):
    verb: str
    kind: str
    key: str
    feature: str
    reason: str
    differences: list[str]


class FeaturePlanOut(BaseModel):
    feature: str
    enabled: bool
    settings: dict[str, SettingValue]
    actions: list[FeatureActionOut]
    left_alone: list[str]
    note: str | None = None


class FeatureMutationOut(OperationOut):
    changed: bool = True
    plan: FeaturePlanOut


class FeatureNoChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: FeaturePlanOut


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": FeatureMutationOut, "description": "The operation that makes the change."},
    200: {"model": FeatureNoChangeOut, "description": "No change needed, or the plan."},
}


@router.get(BASE, response_model=list[FeatureOut])
async def list_features(cluster: ClusterName,
                        ctx: Annotated[Ctx, Depends(ctx_for(svc.list_features))]) -> Any:
    return [asdict(f) for f in await svc.list_features(ctx, cluster)]


@router.get(BASE + "/{feature}", response_model=FeatureOut)
async def get_feature(cluster: ClusterName, feature: Feature,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.get_feature))]) -> Any:
    return asdict(await svc.get_feature(ctx, cluster, feature))


@router.patch(BASE + "/{feature}", response_model=None, status_code=202, responses=RESPONSES)
@router.put(BASE + "/{feature}", response_model=None, status_code=202, responses=RESPONSES)
async def set_feature(cluster: ClusterName, feature: Feature, body: FeatureChangeIn,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.set_feature))],
                      confirm: Confirm = False, dry_run: DryRun = False,
                      idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Enable, disable or change settings, sending only what changes (PUT is the same:
    settings not sent keep their value); equal to what is there: 200 `changed: false`.
    A change that terminates nodes (autoscaling off) or deletes what holds data (a file
    system, a workspace, a tracking server, a volume or claim) is a destroy: the admin role
    and confirm=true."""
    return answer(await svc.set_feature(
        ctx, cluster, feature, enabled=body.enabled, settings=body.settings,
        confirm=confirm or body.confirm, dry_run=dry_run or body.dry_run,
        idempotency_key=idempotency_key))


@dataclass(frozen=True, kw_only=True)
class FeaturePlanIn(FeaturePlanRequest):
    """The change whose plan is wanted."""


@router.post(BASE + "/{feature}/plan", response_model=FeatureNoChangeOut)
async def plan_feature(cluster: ClusterName, feature: Feature, body: FeaturePlanIn,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.plan_feature))]) -> JSONResponse:
    """The plan of a change (objects and AWS calls, in order); changes nothing."""
    return answer(await svc.plan_feature(ctx, cluster, feature, enabled=body.enabled,
                                         settings=body.settings))
