"""Space templates: list (everyone), put and delete (admin). Plain writes, answered at once
(200, `changed`): ADR 0020."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.api.params import ClusterName, DryRun
from podplane.api.routers.jobs import answer
from podplane.domain.errors import InvalidInput
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN
from podplane.domain.spaces.templates import TemplateRequest, TemplateView
from podplane.services.context import Ctx
from podplane.services.spaces import templates as svc

router = APIRouter(tags=["spaces"])
BASE = "/clusters/{cluster}/space-templates"
TemplateName = Annotated[str, Path(min_length=1, max_length=DNS_LABEL_MAX,
                                   pattern=DNS_LABEL_PATTERN)]


@dataclass(frozen=True, kw_only=True)
class TemplateIn(TemplateRequest):
    """A template: allowed images, bounds, and what a space asking for nothing gets. `name`
    is the path's; `delete: true` deletes it."""

    name: str = ""   # the path names it


class TemplatePlanOut(BaseModel):
    template: str
    action: str = Field(description="create, update or delete.")
    manifest: dict[str, Any] | None = Field(None, description="The WorkspaceTemplate.")


class TemplateChangeOut(BaseModel):
    changed: bool
    dry_run: bool
    plan: TemplatePlanOut


@router.get(BASE, response_model=list[TemplateView])
async def list_templates(cluster: ClusterName,
                         ctx: Annotated[Ctx, Depends(ctx_for(svc.list_templates))]) -> Any:
    """Every space template on the cluster, podplane's and those made with hyp."""
    return await svc.list_templates(ctx, cluster)


@router.put(BASE + "/{name}", response_model=TemplateChangeOut)
async def put_template(cluster: ClusterName, name: TemplateName, body: TemplateIn,
                       ctx: Annotated[Ctx, Depends(ctx_for(svc.set_template))],
                       dry_run: DryRun = False) -> JSONResponse:
    """Create or update the template as given (the same again: changed=false)."""
    if body.name and body.name != name:
        raise InvalidInput(f"The body names {body.name!r}, the path {name!r}.", field="name",
                           hint="Leave name out of the body: the path names the template.")
    request = TemplateRequest(**{**body.__dict__, "name": name,
                                 "dry_run": dry_run or body.dry_run})
    return answer(await svc.set_template(ctx, cluster, request))


@router.delete(BASE + "/{name}", response_model=TemplateChangeOut)
async def delete_template(cluster: ClusterName, name: TemplateName,
                          ctx: Annotated[Ctx, Depends(ctx_for(svc.set_template))],
                          dry_run: DryRun = False) -> JSONResponse:
    """Delete the template (none: changed=false); refused while spaces use it."""
    request = replace(TemplateRequest(name=name), delete=True, dry_run=dry_run)
    return answer(await svc.set_template(ctx, cluster, request))
