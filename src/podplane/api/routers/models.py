"""Models in the cluster's bucket: download one (202 + operation; ?dry_run=true plans) and
list what is under models/. The Hugging Face token is write-only: it never comes back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.api.params import ClusterName, DryRun, IdempotencyKey
from podplane.api.routers.jobs import answer
from podplane.api.routers.operations import MadeAlreadyOut, OperationOut
from podplane.domain.inference.downloads import DownloadRequest
from podplane.services.context import Ctx
from podplane.services.inference import downloads as svc

router = APIRouter(tags=["models"])
BASE = "/clusters/{cluster}/models"


@dataclass(frozen=True, kw_only=True)
class DownloadIn(DownloadRequest):
    """Download a model (Hugging Face id, or an s3:// prefix of the cluster's bucket) to
    s3://<cluster bucket>/models/<name>/."""


class ModelOut(BaseModel):
    name: str
    uri: str = Field(description="s3://<bucket>/models/<name>/ (an endpoint's model).")
    files: int
    bytes: int
    complete: bool = Field(description="config.json and a weights file are there.")


class DownloadPlanOut(BaseModel):
    model: str
    source: str
    revision: str | None
    destination: str
    job: str = Field(description="The Kubernetes Job that downloads (unique per download).")
    token_secret: str | None = Field(description="The Secret holding the token, if any.")
    steps: list[str]
    manifest: dict[str, Any] = Field(description="The Job as applied.")


class DownloadMutationOut(OperationOut):
    changed: bool = True
    plan: DownloadPlanOut | dict[str, str]  # {} when an idempotency key replays the start


class DownloadPlanOnlyOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: DownloadPlanOut | MadeAlreadyOut


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": DownloadMutationOut, "description": "The download's operation."},
    200: {"model": DownloadPlanOnlyOut, "description": "The dry-run plan, or nothing to do "
          "(this same download made the model already)."},
}


@router.get(BASE, response_model=list[ModelOut])
async def list_models(cluster: ClusterName,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.list_models))]) -> Any:
    """What is under s3://<bucket>/models/, read from S3."""
    return await svc.list_models(ctx, cluster)


@router.post(BASE, response_model=None, status_code=202, responses=RESPONSES)
async def download_model(cluster: ClusterName, body: DownloadIn,
                         ctx: Annotated[Ctx, Depends(ctx_for(svc.download_model))],
                         dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                         ) -> JSONResponse:
    """Start a download: a Job writes the files, the operation watches that Job and checks
    the objects landed."""
    request = DownloadRequest(**{**body.__dict__, "dry_run": dry_run or body.dry_run})
    return answer(await svc.download_model(ctx, cluster, request,
                                           idempotency_key=idempotency_key))
