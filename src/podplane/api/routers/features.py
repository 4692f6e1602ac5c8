"""Managed features of a cluster: list, get, set (PATCH or PUT with only what changes)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from podplane.api.auth import ctx_for
from podplane.api.routers.operations import OperationOut, out
from podplane.domain.features.catalog import SettingValue
from podplane.domain.features.requests import (
    FEATURE_NAME_PATTERN,
    FeatureChangeRequest,
    FeaturePlanRequest,
)
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN
from podplane.services.context import Ctx
from podplane.services.features import service as svc
from podplane.services.groups.outcome import Outcome

router = APIRouter(tags=["features"])
ClusterName = Annotated[str, Path(min_length=1, max_length=DNS_LABEL_MAX,
                                  pattern=DNS_LABEL_PATTERN)]
Feature = Annotated[str, Path(min_length=1, max_length=64, pattern=FEATURE_NAME_PATTERN)]
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", min_length=1, max_length=256, pattern=r"^[\x21-\x7e]+$",
           description="Same key + same body returns the same operation."),
]
DryRun = Annotated[bool, Query(description="Return the plan without acting.")]
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


def answer(outcome: Outcome) -> JSONResponse:
    if outcome.operation is None:
        body = {"changed": outcome.changed, "dry_run": outcome.dry_run, "plan": outcome.plan}
        return JSONResponse(jsonable_encoder(body), status_code=200)
    op = out(outcome.operation).model_dump(mode="json")
    return JSONResponse({**op, "changed": True, "plan": outcome.plan}, status_code=202)


@router.get(BASE, response_model=list[FeatureOut])
async def list_features(cluster: ClusterName,
                        ctx: Annotated[Ctx, Depends(ctx_for(svc.list_features))]) -> Any:
    return [asdict(f) for f in await svc.list_features(ctx, cluster)]


@router.get(BASE + "/{feature}", response_model=FeatureOut)
async def get_feature(cluster: ClusterName, feature: Feature,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.get_feature))]) -> Any:
    return asdict(await svc.get_feature(ctx, cluster, feature))


async def _set(cluster: str, feature: str, body: FeatureChangeIn, ctx: Ctx, dry_run: bool,
               idempotency_key: str | None) -> JSONResponse:
    return answer(await svc.set_feature(
        ctx, cluster, feature, enabled=body.enabled, settings=body.settings,
        dry_run=dry_run or body.dry_run, idempotency_key=idempotency_key))


@router.patch(BASE + "/{feature}", response_model=None, status_code=202, responses=RESPONSES)
async def set_feature(cluster: ClusterName, feature: Feature, body: FeatureChangeIn,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.set_feature))],
                      dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                      ) -> JSONResponse:
    """Enable, disable or change settings; equal to what is there: 200 `changed: false`."""
    return await _set(cluster, feature, body, ctx, dry_run, idempotency_key)


@router.put(BASE + "/{feature}", response_model=None, status_code=202, responses=RESPONSES)
async def put_feature(cluster: ClusterName, feature: Feature, body: FeatureChangeIn,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.set_feature))],
                      dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                      ) -> JSONResponse:
    """The same as PATCH (settings not sent keep their value)."""
    return await _set(cluster, feature, body, ctx, dry_run, idempotency_key)


@dataclass(frozen=True, kw_only=True)
class FeaturePlanIn(FeaturePlanRequest):
    """The change whose plan is wanted."""


@router.post(BASE + "/{feature}/plan", response_model=FeatureNoChangeOut)
async def plan_feature(cluster: ClusterName, feature: Feature, body: FeaturePlanIn,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.plan_feature))]) -> JSONResponse:
    """The plan of a change (objects and AWS calls, in order); changes nothing."""
    return answer(await svc.plan_feature(ctx, cluster, feature, enabled=body.enabled,
                                         settings=body.settings))
