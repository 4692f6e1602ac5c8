"""Space templates: admins write them, everyone lists them, a space create reads one.

A template is one object written in one call and settled when written (nothing waits on a
controller), so a change is a plain idempotent write, not an operation (ADR 0020): the same
template again answers `changed: false`, a delete of a missing one too.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.effects import Effect, Role
from podplane.domain.errors import Conflict, NotFound
from podplane.domain.spaces import render
from podplane.domain.spaces import templates as tp
from podplane.domain.spaces.templates import TemplateRequest, TemplateView
from podplane.services.context import Ctx
from podplane.services.mutation import Outcome
from podplane.services.registry import service
from podplane.services.scope import kube_of
from podplane.services.spaces import cluster as sc

Obj = dict[str, Any]


class TemplateInUse(Conflict):
    code = "template_in_use"


def target(cluster: str, name: str) -> str:
    return f"cluster/{cluster}/space-template/{name}"


@service(Effect.READ, "space_template.list")
async def list_templates(ctx: Ctx, cluster: str) -> list[TemplateView]:
    """Every WorkspaceTemplate in the spaces' namespace: podplane's and those made with hyp."""
    _, kube = await kube_of(ctx, cluster)
    return sorted((tp.view(t) for t in await _all(kube)), key=lambda v: v.name)


async def find(kube: KubePort, cluster: str, name: str) -> TemplateView:
    """The template a space names; 404 naming it when there is none."""
    found = await sc.get_or_none(kube, tp.API_VERSION, tp.KIND, name)
    if found is None:
        raise NotFound(f"Cluster {cluster!r} has no space template {name!r}.",
                       hint="List them with GET .../space-templates (space_template_list).")
    return tp.view(found)


@service(Effect.MUTATE, "space_template.set", min_role=Role.ADMIN,
         target=lambda cluster, request, *_a, **_k: target(cluster, request.name))
async def set_template(ctx: Ctx, cluster: str, request: TemplateRequest) -> Outcome:
    """Create or update a template as asked, or delete it (`delete`)."""
    _, kube = await kube_of(ctx, cluster)
    await sc.require_feature(ctx, cluster)
    now = await kube.get(tp.API_VERSION, tp.KIND, request.name, render.NAMESPACE)
    if request.delete:
        return await _delete(kube, cluster, request, now)
    tp.check_template(request)
    wanted = tp.template(request)
    plan: Obj = {"template": request.name, "action": "update" if now else "create",
                 "manifest": wanted}
    if now is not None and _same(now, wanted):
        return Outcome(False, plan, dry_run=request.dry_run)
    if not request.dry_run:
        await kube.apply(wanted, force=True)
    return Outcome(True, plan, dry_run=request.dry_run)


async def _delete(kube: KubePort, cluster: str, request: TemplateRequest,
                  now: Obj | None) -> Outcome:
    plan: Obj = {"template": request.name, "action": "delete"}
    if now is None:
        return Outcome(False, plan, dry_run=request.dry_run)
    # Upstream keeps a referenced template until its workspaces are gone (jupyter-k8s
    # workspacetemplate_controller.go, its finalizer); podplane says so up front instead.
    users = sorted(ws["metadata"]["name"] for ws in await sc.workspaces(kube)
                   if ((ws.get("spec") or {}).get("templateRef") or {}).get("name")
                   == request.name)
    if users:
        raise TemplateInUse(f"Template {request.name!r} is used by spaces "
                            f"{', '.join(users)}.", hint="Delete those spaces first.")
    if not request.dry_run:
        await kube.delete(tp.API_VERSION, tp.KIND, request.name, namespace=render.NAMESPACE)
    return Outcome(True, plan, dry_run=request.dry_run)


def _same(now: Obj, wanted: Obj) -> bool:
    """What podplane writes is there (the API server or a webhook may add to it)."""
    notes, spec = now["metadata"].get("annotations") or {}, now.get("spec") or {}
    return all(spec.get(k) == v for k, v in wanted["spec"].items()) and all(
        notes.get(k) == v for k, v in wanted["metadata"]["annotations"].items())


async def _all(kube: KubePort) -> list[Obj]:
    try:
        return await kube.list(tp.API_VERSION, tp.KIND, namespace=render.NAMESPACE)
    except NotFound:   # the CRD is not installed: no templates
        return []
