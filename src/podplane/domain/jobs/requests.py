"""The job submission, field by field: the REST body and the MCP tool's input schema derive
from this declaration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import ConfigDict, Field

from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN

# A job's name becomes its pods' names (`<job>-<replica>-<i>`) and a label value: keep room for
# the suffix within a DNS label.
JOB_NAME_MAX = 40
JobName = Annotated[str, Field(min_length=1, max_length=JOB_NAME_MAX,
                               pattern=DNS_LABEL_PATTERN,
                               description="The job's name (a DNS label, <= 40).")]
ParamValue = bool | int | float | str
RecipeName = Annotated[str, Field(min_length=1, max_length=64, pattern=DNS_LABEL_PATTERN,
                                  description="The recipe (GET .../jobs/recipes).")]
MAX_REPLICAS = 64
MAX_RESTARTS = 20


@dataclass(frozen=True, kw_only=True)
class JobRequest:
    """Submit a training job from a recipe onto one instance group."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: JobName
    recipe: RecipeName
    instance_group: Annotated[str, Field(min_length=1, max_length=DNS_LABEL_MAX,
                                         pattern=DNS_LABEL_PATTERN,
                                         description="The instance group its pods run on.")]
    replicas: Annotated[int | None, Field(ge=1, le=MAX_REPLICAS,
                                          description="Pods (one per node); default: the "
                                          "recipe's.")] = None
    gpus_per_replica: Annotated[int | None, Field(ge=0, le=16, description=(
        "GPUs per pod; default: every GPU of the group's nodes."))] = None
    params: Annotated[dict[str, ParamValue], Field(description=(
        "The recipe's parameters (defaults apply to those left out)."))] = \
        field(default_factory=dict)
    max_restarts: Annotated[int, Field(ge=0, le=MAX_RESTARTS, description=(
        "Restart budget: job restarts after a fault before it fails "
        "(HyperPodPyTorchJob runPolicy.jobMaxRetryCount)."))] = 2
    elastic: Annotated[bool, Field(description=(
        "Elastic training (scale between 1 and `replicas`); refused on Spot groups."))] = False
    dry_run: Annotated[bool, Field(description="Return the plan without acting.")] = False
