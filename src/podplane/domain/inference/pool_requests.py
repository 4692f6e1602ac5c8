"""A warm pool request and an assignment, field by field: the REST bodies and the MCP tools'
input schemas derive from these declarations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field

from podplane.domain.effects import DryRun
from podplane.domain.inference.requests import (
    IMAGE_PATTERN,
    MAX_REPLICAS,
    MODEL_PATTERN,
    Dtype,
    EndpointName,
    Engine,
)
from podplane.domain.inference.source_paths import descending
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN

PoolName = Annotated[str, Field(min_length=1, max_length=40, pattern=DNS_LABEL_PATTERN,
                                description="Pool.")]


@dataclass(frozen=True, kw_only=True)
class PoolRequest:
    """Warm engine pods of one model on one instance group, assigned to endpoints by label."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: PoolName
    instance_group: Annotated[str, Field(min_length=1, max_length=DNS_LABEL_MAX,
                                         pattern=DNS_LABEL_PATTERN)]
    model: Annotated[str, Field(min_length=1, max_length=512, pattern=MODEL_PATTERN),
                     AfterValidator(descending("model"))]
    engine: Engine = "vllm"
    image: Annotated[str | None, Field(max_length=255, pattern=IMAGE_PATTERN)] = None
    tensor_parallel: Annotated[int, Field(ge=1, le=64)] = 1
    max_model_len: Annotated[int | None, Field(ge=128, le=1_048_576)] = None
    dtype: Dtype = "auto"
    replicas: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = 1
    dry_run: bool = False


@dataclass(frozen=True, kw_only=True)
class AssignRequest:
    """Give an endpoint `pods` of the pool's pods (0 unassigns it, after draining)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    endpoint: EndpointName
    pods: Annotated[int, Field(ge=0, le=MAX_REPLICAS, description=(
        "Pods (0 unassigns)."))] = 1
    confirm: Annotated[bool, Field(description=(
        "Required with pods=0, which removes the endpoint: a destroy, for admins only."))
    ] = False
    dry_run: DryRun = False
