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
    cpu: Annotated[str, Field(pattern=CPU_PATTERN, description="CPU request.")] = "1"
    memory: Annotated[str, Field(pattern=MEMORY_PATTERN, description="e.g. 4Gi.")] = "4Gi"
    gpus: Annotated[int, Field(ge=0, le=MAX_GPUS)] = 0
    storage_gib: Annotated[int, Field(ge=1, le=1000, description="Home volume.")] = 20
    idle_minutes: Annotated[int, Field(ge=0, le=1440, description=(
        "Stop after this long idle; 0 never."))] = 60
    dry_run: Annotated[bool, Field(description="Plan only.")] = False
