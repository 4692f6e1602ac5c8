"""A space request, field by field: the REST body and the MCP tool's schema derive from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN

# The operator names the Service `workspace-<name>-service` (jupyter-k8s
# internal/controller/constants.go, GenerateServiceName): 18 characters around the name, and a
# Service name is a DNS label of at most 63.
SPACE_NAME_MAX = 40
SpaceName = Annotated[str, Field(min_length=1, max_length=SPACE_NAME_MAX,
                                 pattern=DNS_LABEL_PATTERN, description="Space.")]
# Kubernetes quantities as a person writes them (API reference, "Quantity"): 2, 0.5, 500m; 4Gi.
CPU_PATTERN = r"^([1-9][0-9]{0,2}(\.[0-9]{1,3})?|0\.[0-9]{1,3}|[1-9][0-9]{0,5}m)$"
MEMORY_PATTERN = r"^[1-9][0-9]{0,5}(Mi|Gi)$"
MAX_GPUS = 8
# An image reference as a registry takes it (distribution/reference: name[:tag][@digest]).
IMAGE_PATTERN = r"^[a-z0-9][a-z0-9._/:@-]{0,254}$"
App = Literal["jupyterlab"]
Desired = Literal["Running", "Stopped"]


@dataclass(frozen=True, kw_only=True)
class SpaceRequest:
    """A JupyterLab with a home volume and the cluster bucket at the jobs' paths."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: SpaceName
    display_name: Annotated[str | None, Field(max_length=64, pattern=r"^[^\x00-\x1f<>]*$",
                                              description="Default: the name.")] = None
    app: App = "jupyterlab"
    instance_group: Annotated[str | None, Field(
        max_length=DNS_LABEL_MAX, pattern=DNS_LABEL_PATTERN,
        description="Default: any group (required with gpus).")] = None
    template: Annotated[str | None, Field(
        max_length=DNS_LABEL_MAX, pattern=DNS_LABEL_PATTERN,
        description="Its defaults and bounds apply.")] = None
    image: Annotated[str | None, Field(pattern=IMAGE_PATTERN, max_length=255)] = None
    # None: the template's default, else podplane's (domain/spaces/templates.py)
    cpu: Annotated[str | None, Field(pattern=CPU_PATTERN, description="CPU request.")] = None
    memory: Annotated[str | None, Field(pattern=MEMORY_PATTERN, description="e.g. 4Gi.")] = None
    gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    storage_gib: Annotated[int | None, Field(ge=1, le=1000, description="Home volume.")] = None
    idle_minutes: Annotated[int | None, Field(ge=0, le=1440, description=(
        "Stop after this long idle; 0 never."))] = None
    dry_run: Annotated[bool, Field(description="Plan only.")] = False


@dataclass(frozen=True)
class SpaceChoice:
    """A space request with every choice made: by the request, else its template, else
    podplane's first-notebook defaults. What render writes."""

    name: str
    display_name: str
    app: str
    instance_group: str | None
    image: str
    cpu: str
    memory: str
    gpus: int
    storage_gib: int
    idle_minutes: int
    template: str | None
