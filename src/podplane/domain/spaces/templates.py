"""Space templates: what an admin allows (images, resource bounds) and what a space gets when it
asks for nothing (resources, home size, idle timeout, the bucket mounts). Pure.

A template is the workspace operator's WorkspaceTemplate (jupyter-infra/jupyter-k8s
api/v1alpha1/workspacetemplate_types.go), in the spaces' namespace, so `hyp list
hyp-space-template` lists podplane's templates and a space made with `hyp` from one is bounded
by the operator's webhook as podplane's are (template_validator.go ValidateCreateWorkspace).
podplane checks a space against its template before it writes anything, with the same bounds,
so a refusal names the field and the bound instead of arriving as the webhook's 403.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from podplane.domain.errors import InvalidInput
from podplane.domain.features import spaces as feature
from podplane.domain.jobs.kinds import MANAGED_BY
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.domain.spaces import render
from podplane.domain.spaces.requests import (
    CPU_PATTERN,
    IMAGE_PATTERN,
    MAX_GPUS,
    MEMORY_PATTERN,
    SpaceChoice,
    SpaceRequest,
)

Obj = dict[str, Any]
API_VERSION, KIND = render.API_VERSION, "WorkspaceTemplate"
STORAGE_ANNOTATION = "podplane.io/storage-gib"
IDLE_ANNOTATION = "podplane.io/idle-minutes"
# What a space asks for when neither it nor a template says (a first notebook: a CPU, room for
# a dataframe, a home that holds a few checkpoints, stopped after an idle hour).
CPU, MEMORY, STORAGE_GIB, IDLE_MINUTES = "1", "4Gi", 20, 60
IMAGES = [render.IMAGE.format(kind="cpu"), render.IMAGE.format(kind="gpu")]
TemplateName = Annotated[str, Field(min_length=1, max_length=63, pattern=DNS_LABEL_PATTERN,
                                    description="Template.")]
Image = Annotated[str, Field(pattern=IMAGE_PATTERN, max_length=255)]
_SUFFIX = {"": 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([a-zA-Z]*)$")


@dataclass(frozen=True, kw_only=True)
class TemplateRequest:
    """What spaces made from this template may use, and get when they ask for nothing."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: TemplateName
    display_name: Annotated[str | None, Field(max_length=64, pattern=r"^[^\x00-\x1f<>]*$")] = None
    images: Annotated[list[Image], Field(min_length=1, max_length=10, description=(
        "Allowed; the first is the default."))] = field(default_factory=lambda: list(IMAGES))
    cpu: Annotated[str, Field(pattern=CPU_PATTERN)] = CPU
    max_cpu: Annotated[str, Field(pattern=CPU_PATTERN)] = "4"
    memory: Annotated[str, Field(pattern=MEMORY_PATTERN)] = MEMORY
    max_memory: Annotated[str, Field(pattern=MEMORY_PATTERN)] = "16Gi"
    max_gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    storage_gib: Annotated[int, Field(ge=1, le=1000)] = STORAGE_GIB
    max_storage_gib: Annotated[int, Field(ge=1, le=1000)] = 100
    idle_minutes: Annotated[int, Field(ge=0, le=1440)] = IDLE_MINUTES
    delete: Annotated[bool, Field(description="Delete it instead.")] = False
    dry_run: bool = False


@dataclass(frozen=True)
class TemplateView:
    name: str
    display_name: str
    images: list[str]             # allowed; the first is the default. Empty: any image
    cpu: str | None               # what a space gets when it asks for nothing
    memory: str | None
    storage_gib: int | None
    idle_minutes: int | None
    max_cpu: str | None           # bounds; None: unbounded
    max_memory: str | None
    max_gpus: int | None
    max_storage_gib: int | None
    made_by: str                  # podplane | other (made with hyp or kubectl)


def quantity(text: str) -> float:
    """A Kubernetes quantity as a number (API reference, "Quantity"); unreadable is 0."""
    m = _QUANTITY.match(text.strip())
    return float(m.group(1)) * _SUFFIX[m.group(2)] if m and m.group(2) in _SUFFIX else 0.0


def check_template(request: TemplateRequest) -> None:
    """A template whose defaults break its own bounds could admit no space asking for
    nothing (the operator's template webhook refuses min above max for the same reason)."""
    for default, bound, value, top in (
            ("cpu", "max_cpu", request.cpu, request.max_cpu),
            ("memory", "max_memory", request.memory, request.max_memory),
            ("storage_gib", "max_storage_gib", str(request.storage_gib),
             str(request.max_storage_gib))):
        if quantity(value) > quantity(top):
            raise InvalidInput(f"{default} {value} is above {bound} {top}.", field=default,
                               hint=f"Raise {bound} or lower {default}.")


def template(request: TemplateRequest) -> Obj:
    """The WorkspaceTemplate. No primaryStorage.defaultSize: the operator would then give
    podplane's spaces its own `spec.storage` claim at the home path, which it deletes with the
    space (podplane's home is its own claim, render.home_claim)."""
    annotations = {STORAGE_ANNOTATION: str(request.storage_gib),
                   IDLE_ANNOTATION: str(request.idle_minutes)}
    spec: Obj = {
        "displayName": request.display_name or request.name,
        "defaultImage": request.images[0], "allowedImages": list(request.images),
        "defaultResources": {"requests": {"cpu": request.cpu, "memory": request.memory},
                             "limits": {"memory": request.memory}},
        "resourceBounds": {"resources": {
            "cpu": {"min": "0", "max": request.max_cpu},
            "memory": {"min": "0", "max": request.max_memory},
            render.GPU: {"min": "0", "max": str(request.max_gpus)}}},
        "primaryStorage": {"minSize": "1Gi", "maxSize": f"{request.max_storage_gib}Gi",
                           "defaultMountPath": render.HOME},
        # the default mounts: the bucket at the jobs' paths, for spaces made with hyp too
        "defaultVolumes": feature.mounts(),
        "defaultOwnershipType": "Public", "defaultAccessType": "OwnerOnly",
        "appType": "jupyterlab",
    }
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": request.name, "namespace": render.NAMESPACE,
                         "labels": {MANAGED_BY: "podplane"}, "annotations": annotations},
            "spec": spec}


def view(obj: Obj) -> TemplateView:
    """Any WorkspaceTemplate, podplane's or not: what it leaves out is None."""
    spec, meta = obj.get("spec") or {}, obj["metadata"]
    notes = meta.get("annotations") or {}
    requests = (spec.get("defaultResources") or {}).get("requests") or {}
    bounds = (spec.get("resourceBounds") or {}).get("resources") or {}
    primary = spec.get("primaryStorage") or {}
    idle = spec.get("defaultIdleShutdown") or {}
    images = [] if spec.get("allowCustomImages") else \
        list(spec.get("allowedImages") or [spec.get("defaultImage")])
    default = spec.get("defaultImage")
    if default in images:   # the default first
        images = [default, *[i for i in images if i != default]]
    return TemplateView(
        name=meta["name"], display_name=str(spec.get("displayName") or meta["name"]),
        images=[str(i) for i in images if i],
        cpu=_text(requests.get("cpu")), memory=_text(requests.get("memory")),
        storage_gib=_int(notes.get(STORAGE_ANNOTATION)) or _gib(primary.get("defaultSize")),
        idle_minutes=_int(notes.get(IDLE_ANNOTATION)) if IDLE_ANNOTATION in notes
        else (_int(idle.get("idleTimeoutInMinutes")) if idle.get("enabled") else None),
        max_cpu=_text((bounds.get("cpu") or {}).get("max")),
        max_memory=_text((bounds.get("memory") or {}).get("max")),
        max_gpus=_int((bounds.get(render.GPU) or {}).get("max")),
        max_storage_gib=_gib(primary.get("maxSize")),
        made_by="podplane" if (meta.get("labels") or {}).get(MANAGED_BY) == "podplane"
        else "other")


# no template: every default None, every bound None
_NONE = TemplateView("", "", [], None, None, None, None, None, None, None, None, "")


def choose(request: SpaceRequest, tpl: TemplateView | None) -> SpaceChoice:
    """The space's choices: the request's, else the template's defaults, else podplane's; then
    the template's bounds (InvalidInput naming the field and the bound)."""
    gpus, got = request.gpus, tpl or _NONE
    chosen = SpaceChoice(
        name=request.name, display_name=request.display_name or request.name,
        app=request.app, instance_group=request.instance_group,
        image=request.image or _image(gpus, tpl),
        cpu=request.cpu or got.cpu or CPU,
        memory=request.memory or got.memory or MEMORY,
        gpus=gpus,
        storage_gib=request.storage_gib or got.storage_gib or STORAGE_GIB,
        idle_minutes=_first(request.idle_minutes, got.idle_minutes, IDLE_MINUTES),
        template=tpl.name if tpl else None)
    if tpl:
        _bounded(chosen, tpl)
    return chosen


def _bounded(chosen: SpaceChoice, tpl: TemplateView) -> None:
    if tpl.images and chosen.image not in tpl.images:
        raise InvalidInput(f"Image {chosen.image!r} is not allowed by template {tpl.name!r}.",
                           field="image", hint="Allowed: " + ", ".join(tpl.images) + ".")
    for name, value, top in (("cpu", chosen.cpu, tpl.max_cpu),
                             ("memory", chosen.memory, tpl.max_memory),
                             ("gpus", str(chosen.gpus), _str(tpl.max_gpus)),
                             ("storage_gib", str(chosen.storage_gib),
                              _str(tpl.max_storage_gib))):
        if top is not None and quantity(value) > quantity(top):
            raise InvalidInput(f"{name} {value} exceeds template {tpl.name!r}'s maximum {top}.",
                               field=name, hint=f"Ask for at most {top}, or another template.")


def _image(gpus: int, tpl: TemplateView | None) -> str:
    """podplane's image for the space (GPU build with GPUs) when the template allows it, else
    the template's default."""
    ours = render.IMAGE.format(kind="gpu" if gpus else "cpu")
    if tpl is None or not tpl.images or ours in tpl.images:
        return ours
    return tpl.images[0]


def _first(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _str(value: int | None) -> str | None:
    return None if value is None else str(value)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _gib(value: Any) -> int | None:
    return int(quantity(str(value)) / 2.0**30) if value is not None else None
