"""Nodes: list and describe (health from HyperPod + Kubernetes), reboot, replace, delete."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Header, Path, Query
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict

from podplane.api.auth import ctx_for
from podplane.api.derived import fields_of
from podplane.api.params import ClusterName, Confirm, DryRun, IdempotencyKey
from podplane.api.routers.instance_groups import RESPONSES, answer
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN, NODE_PATTERN
from podplane.services.context import Ctx
from podplane.services.nodes import service as svc
from podplane.services.nodes import views
from podplane.services.observe import fleet

router = APIRouter(tags=["nodes"])
NodeName = Annotated[str, Path(min_length=10, max_length=40, pattern=NODE_PATTERN,
                               description="Instance id, or the Kubernetes Node name.")]
BASE = "/clusters/{cluster}/nodes"


class ActionIn(BaseModel):
    """Optional body: the same switches as the query string (MCP sends them here)."""

    model_config = ConfigDict(extra="forbid")
    confirm: bool = False
    dry_run: bool = False


Action = Annotated[ActionIn | None, Body()]


class EscalationStep(fields_of(views.EscalationStepView)):  # type: ignore[misc]
    pass


class HealthOut(fields_of(views.HealthView,  # type: ignore[misc]
                          escalation=list[EscalationStep])):
    pass


class GpuOut(fields_of(views.GpuView)):  # type: ignore[misc]
    pass


class NodeOut(fields_of(views.NodeView, health=HealthOut, gpus=GpuOut)):  # type: ignore[misc]
    pass


class NodeDetailOut(fields_of(views.NodeDetailView,  # type: ignore[misc]
                              health=HealthOut, gpus=GpuOut)):
    pass


GZIP_FROM = 1024  # as the app's GZip middleware (api/app.py)
Health = Literal["healthy", "in_progress", "unhealthy", "unknown"]


@router.get(BASE, response_model=list[NodeOut],
            responses={304: {"description": "Not modified (If-None-Match matched the ETag)."}})
async def list_nodes(
    cluster: ClusterName, ctx: Annotated[Ctx, Depends(ctx_for(svc.list_nodes))],
    instance_group: Annotated[str | None, Query(max_length=DNS_LABEL_MAX,
                                                pattern=DNS_LABEL_PATTERN)] = None,
    health: Annotated[Health | None, Query(description="Only nodes in this state.")] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000, description="Page size (in id order); "
                                       "X-Next-Cursor names the next page.")] = None,
    cursor: Annotated[str | None, Query(max_length=40, pattern=NODE_PATTERN,
                                        description="The X-Next-Cursor of the previous "
                                                    "page.")] = None,
    if_none_match: Annotated[str | None, Header(alias="If-None-Match", max_length=256)] = None,
    accept_encoding: Annotated[str | None, Header(alias="Accept-Encoding", max_length=256,
                                                  include_in_schema=False)] = None,
) -> Response:
    """Served from the shared observation of the cluster (services/observe): the same body and
    ETag for every reader until the cloud's answer changes."""
    page = await fleet.node_page(ctx, cluster, instance_group, health, cursor, limit)
    headers = {"ETag": page.etag, "X-Total-Count": str(page.total),
               "Cache-Control": "private, no-cache"}
    if page.next_cursor is not None:
        headers["X-Next-Cursor"] = page.next_cursor
    if if_none_match is not None and page.etag in {t.strip() for t in if_none_match.split(",")}:
        return Response(status_code=304, headers=headers)
    headers["Vary"] = "Accept-Encoding"
    if "gzip" in (accept_encoding or "") and len(page.body) > GZIP_FROM:
        return Response(page.gzipped, media_type="application/json",
                        headers={**headers, "Content-Encoding": "gzip"})
    return Response(page.body, media_type="application/json", headers=headers)


@router.get(BASE + "/{node}", response_model=NodeDetailOut)
async def get_node(cluster: ClusterName, node: NodeName,
                   ctx: Annotated[Ctx, Depends(ctx_for(svc.get_node))]) -> NodeDetailOut:
    shown: NodeDetailOut = NodeDetailOut.model_validate(await svc.get_node(ctx, cluster, node))
    return shown


@router.post(BASE + "/{node}/reboot", response_model=None, status_code=202,
             responses=RESPONSES)
async def reboot_node(cluster: ClusterName, node: NodeName,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.reboot_node))],
                      dry_run: DryRun = False, idempotency_key: IdempotencyKey = None,
                      body: Action = None) -> JSONResponse:
    """Reboot (keeps instance storage). The first step after investigating a fault."""
    dry_run = dry_run or bool(body and body.dry_run)
    return answer(await svc.reboot_node(ctx, cluster, node, dry_run=dry_run,
                                        idempotency_key=idempotency_key))


@router.post(BASE + "/{node}/replace", response_model=None, status_code=202,
             responses=RESPONSES)
async def replace_node(cluster: ClusterName, node: NodeName,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.replace_node))],
                       confirm: Confirm = False, dry_run: DryRun = False,
                       idempotency_key: IdempotencyKey = None,
                       body: Action = None) -> JSONResponse:
    """Replace with a new instance (confirm=true): instance storage is lost."""
    return answer(await svc.replace_node(ctx, cluster, node,
                                         confirm=confirm or bool(body and body.confirm),
                                         dry_run=dry_run or bool(body and body.dry_run),
                                         idempotency_key=idempotency_key))


@router.delete(BASE + "/{node}", response_model=None, status_code=202, responses=RESPONSES)
async def delete_node(cluster: ClusterName, node: NodeName,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.delete_node))],
                      confirm: Confirm = False, dry_run: DryRun = False,
                      idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Terminate a node (confirm=true); its group's count drops by one."""
    return answer(await svc.delete_node(ctx, cluster, node, confirm=confirm, dry_run=dry_run,
                                        idempotency_key=idempotency_key))
