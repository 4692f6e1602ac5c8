"""The job submission, field by field: the REST body and the MCP tool's input schema derive
from this declaration."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter

from podplane.domain.effects import DryRun
from podplane.domain.jobs.recipes import IMAGE_VALUE, JobKind
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
# A container's environment names as C identifiers, what every shell and `os.environ` reader
# takes without quoting (Kubernetes accepts more: apimachinery validation `IsEnvVarName`).
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
# Bounds that keep a job object far below etcd's 1.5 MiB request limit (etcd docs, "System
# limits": --max-request-bytes): words of 4 KiB, and 32 KiB in all (argv and environment,
# workloads.py), which a PyTorchJob carries twice (its Master and Worker templates).
MAX_WORD, MAX_COMMAND, MAX_ARGS, MAX_ENV, MAX_CONTAINER_BYTES = 4096, 64, 256, 64, 32 * 1024
Word = Annotated[str, Field(min_length=1, max_length=MAX_WORD)]
EnvName = Annotated[str, Field(pattern=ENV_NAME_PATTERN)]
EnvValue = Annotated[str, Field(max_length=MAX_WORD)]


@dataclass(frozen=True, kw_only=True)
class Container:
    """Bring your own workload: the job's pods run this image and argv (no shell between)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    kind: Annotated[JobKind, Field(description=(
        "HyperPodPyTorchJob needs `hyperpodrun` in the image."))] = "PyTorchJob"
    image: Annotated[str, Field(max_length=255, pattern=f"^(?:{IMAGE_VALUE})$",
                                description="registry/path:tag.")]
    command: Annotated[list[Word], Field(min_length=1, max_length=MAX_COMMAND,
                                         description="argv, e.g. [\"python\", "
                                         "\"/data/train.py\"].")]
    args: Annotated[list[Word], Field(max_length=MAX_ARGS)] = field(default_factory=list)
    # no name outside the pattern (the schema says so too: patternProperties alone allows any)
    env: Annotated[dict[EnvName, EnvValue], Field(
        max_length=MAX_ENV, json_schema_extra={"additionalProperties": False})] = \
        field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class JobRequest:
    """Submit a training job onto one instance group: a recipe, or your own container."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: JobName
    recipe: RecipeName | None = None
    container: Annotated[Container | None, Field(description=(
        "Instead of a recipe: your own workload."))] = None
    instance_group: Annotated[str, Field(min_length=1, max_length=DNS_LABEL_MAX,
                                         pattern=DNS_LABEL_PATTERN,
                                         description="Instance group.")]
    replicas: Annotated[int | None, Field(ge=1, le=MAX_REPLICAS,
                                          description="Pods, one per node (default: the "
                                          "recipe's, else 1).")] = None
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


def stored(request: JobRequest) -> dict[str, Any]:
    """The request as an operation stores it (JSON), without the dry-run switch."""
    return {k: v for k, v in asdict(request).items() if k != "dry_run"}


def restored(body: dict[str, Any]) -> JobRequest:
    """The request an operation stored, validated again into its type (nested dataclasses
    included: a plain dataclass's own constructor would keep them dicts)."""
    return _REQUEST.validate_python(body)


_REQUEST = TypeAdapter(JobRequest)
