"""Dev spaces: create (202), list, get, start/stop (PATCH), delete, logs, files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from podplane.api.auth import ctx_for
from podplane.api.params import (
    ClusterName,
    Confirm,
    DryRun,
    IdempotencyKey,
    LogContainer,
    LogCursor,
    LogLimit,
    LogPod,
    LogSince,
    LogTail,
)
from podplane.api.routers.jobs import PodLogPageOut, answer
from podplane.api.routers.operations import MadeAlreadyOut, OperationOut
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.domain.spaces.requests import SPACE_NAME_MAX, Desired, SpaceRequest
from podplane.domain.spaces.views import SpaceView
from podplane.services import pod_logs
from podplane.services.context import Ctx
from podplane.services.spaces import access, gateway, logs
from podplane.services.spaces import service as svc
from podplane.services.spaces.access import SpaceListing
from podplane.services.spaces.gateway import Opened

router = APIRouter(tags=["spaces"])
SpaceName = Annotated[str, Path(min_length=1, max_length=SPACE_NAME_MAX,
                                pattern=DNS_LABEL_PATTERN)]
BASE = "/clusters/{cluster}/spaces"


@dataclass(frozen=True, kw_only=True)
class SpaceIn(SpaceRequest):
    """A JupyterLab on the cluster: home volume, the bucket at /data, /models, /outputs."""


class SpaceStateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    desired: Desired = Field(description="Running starts it; Stopped frees its compute and "
                             "keeps its home.")
    dry_run: bool = Field(False, description="Plan only.")


class SpacePlanOut(BaseModel):
    space: str
    image: str | None = None
    template: str | None = None
    instance_group: str | None = None
    gpus: int | None = None
    gpus_free: int | None = None
    home: str | None = None
    mounts: list[str] | None = None
    console_path: str | None = None
    manifest: dict[str, Any] | None = Field(None, description="The Workspace as applied.")
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    action: str | None = None


class SpaceMutationOut(OperationOut):
    changed: bool = True
    plan: SpacePlanOut | MadeAlreadyOut | dict[str, str]


class SpaceNoChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: SpacePlanOut | MadeAlreadyOut


RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": SpaceMutationOut, "description": "The operation that makes the change."},
    200: {"model": SpaceNoChangeOut, "description": "No change needed, or the dry-run plan."},
}


class SpaceLogPageOut(PodLogPageOut):
    space: str


@router.get(BASE, response_model=list[SpaceView])
async def list_spaces(cluster: ClusterName,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.list_spaces))]) -> Any:
    """Every space on the cluster, podplane's and those made with hyp or kubectl."""
    return await svc.list_spaces(ctx, cluster)


@router.post(BASE, response_model=None, status_code=202, responses=RESPONSES)
async def create_space(cluster: ClusterName, body: SpaceIn,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.create_space))],
                       dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                       ) -> JSONResponse:
    """Create a space; the operation ends when its server is Running."""
    request = SpaceRequest(**{**body.__dict__, "dry_run": dry_run or body.dry_run})
    return answer(await svc.create_space(ctx, cluster, request,
                                         idempotency_key=idempotency_key))


@router.get(BASE + "/{name}", response_model=SpaceView)
async def get_space(cluster: ClusterName, name: SpaceName,
                    ctx: Annotated[Ctx, Depends(ctx_for(svc.get_space))]) -> Any:
    """The space: state, resources, mounts, pods."""
    return await svc.get_space(ctx, cluster, name)


@router.patch(BASE + "/{name}", response_model=None, status_code=202, responses=RESPONSES)
async def set_space_state(cluster: ClusterName, name: SpaceName, body: SpaceStateIn,
                          ctx: Annotated[Ctx, Depends(ctx_for(svc.set_state))],
                          dry_run: DryRun = False, idempotency_key: IdempotencyKey = None
                          ) -> JSONResponse:
    """Start or stop the space (its home volume stays). Same state: 200, changed=false."""
    return answer(await svc.set_state(ctx, cluster, name, body.desired,
                                      dry_run=dry_run or body.dry_run,
                                      idempotency_key=idempotency_key))


@router.delete(BASE + "/{name}", response_model=None, status_code=202, responses=RESPONSES)
async def delete_space(cluster: ClusterName, name: SpaceName,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_space))],
                       delete_home: Annotated[bool, Query(description=(
                           "Also delete the home volume (admin, confirm=true)."))] = False,
                       confirm: Confirm = False, dry_run: DryRun = False,
                       idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Delete the space's server; its home volume is kept unless delete_home."""
    return answer(await svc.delete_space(ctx, cluster, name, delete_home=delete_home,
                                         confirm=confirm, dry_run=dry_run,
                                         idempotency_key=idempotency_key))


@router.get(BASE + "/{name}/logs", response_model=SpaceLogPageOut)
async def space_logs(cluster: ClusterName, name: SpaceName,
                     ctx: Annotated[Ctx, Depends(ctx_for(logs.space_logs))],
                     pod: LogPod = None, container: LogContainer = None,
                     since_seconds: LogSince = None, tail: LogTail = None,
                     cursor: LogCursor = 0, limit: LogLimit = pod_logs.PAGE) -> Any:
    """The space server's logs, bounded and paged with `cursor`."""
    return await logs.space_logs(ctx, cluster, name, pod, container, since_seconds, tail,
                                 cursor, limit)


@router.get(BASE + "/{name}/files", response_model=SpaceListing)
async def space_files(cluster: ClusterName, name: SpaceName,
                      ctx: Annotated[Ctx, Depends(ctx_for(access.list_files))],
                      path: Annotated[str, Query(max_length=512, description=(
                          "A directory, e.g. data or home/sagemaker-user."))] = "") -> Any:
    """A directory as the space's server sees it: its home and the bucket's mounts."""
    return await access.list_files(ctx, cluster, name, path)


@router.post(BASE + "/{name}/open", response_model=Opened)
async def open_space(cluster: ClusterName, name: SpaceName,
                     ctx: Annotated[Ctx, Depends(ctx_for(gateway.open_space))]) -> Any:
    """A link that opens JupyterLab on the space's own origin (usable once, within a
    minute); the browser then holds a session for that space only (docs/spaces.md)."""
    return await gateway.open_space(ctx, cluster, name)
