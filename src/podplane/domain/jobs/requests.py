"""The job submission, field by field: the REST body and the MCP tool's input schema derive
from this declaration."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field

from podplane.domain.effects import DryRun
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN

# A job's name becomes its pods' names (`<job>-<replica>-<i>`) and a label value: keep room for
# the suffix within a DNS label. It must be a DNS-1035 label (a letter first): Kubeflow's
# training operator refuses any other PyTorchJob name and then does nothing with the job
# (kubeflow/training-operator pkg/apis/kubeflow.org/v1/pytorch_validation.go
# `ValidateV1PyTorchJob`: `NameIsDNS1035Label`); one rule for every kind, so a name valid for
# one recipe is valid for all.
JOB_NAME_MAX = 40
JOB_NAME_PATTERN = r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$"
JOB_NAME_RULE = ("a DNS-1035 label: lowercase letters, digits and '-', a letter first, no '-' "
                 f"last, at most {JOB_NAME_MAX} characters")


def _job_name(value: str) -> str:
    """The pattern's check with a message that says the rule (pydantic's names the regex)."""
    if not re.fullmatch(JOB_NAME_PATTERN, value):
        raise ValueError(f"the job name {value!r} must be {JOB_NAME_RULE}")
    return value


JobName = Annotated[str, Field(min_length=1, max_length=JOB_NAME_MAX,
                               json_schema_extra={"pattern": JOB_NAME_PATTERN},
                               description=f"The job's name: {JOB_NAME_RULE}."),
                    AfterValidator(_job_name)]
ParamValue = bool | int | float | str
RecipeName = Annotated[str, Field(min_length=1, max_length=64, pattern=DNS_LABEL_PATTERN,
                                  description="Recipe name.")]
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
                                         description="Instance group.")]
    replicas: Annotated[int | None, Field(ge=1, le=MAX_REPLICAS,
                                          description="Pods, one per node (default: the "
                                          "recipe's).")] = None
    gpus_per_replica: Annotated[int | None, Field(ge=0, le=16, description=(
        "GPUs per pod (default: all of a node's)."))] = None
    params: Annotated[dict[str, ParamValue], Field(description=(
        "The recipe's parameters; omitted ones take its defaults."))] = \
        field(default_factory=dict)
    max_restarts: Annotated[int, Field(ge=0, le=MAX_RESTARTS, description=(
        "Restarts after a fault before the job fails."))] = 2
    elastic: Annotated[bool, Field(description=(
        "Scale between 1 and `replicas` pods; not on Spot groups."))] = False
    dry_run: DryRun = False
