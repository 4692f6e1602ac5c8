"""The endpoint request, field by field: the REST body and the MCP tool's input schema derive
from this declaration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN

# The name becomes the Deployment's and the Service's name and a label value; the Deployment's
# pods are `<name>-<replicaset hash>-<5>`: keep room for those suffixes within 63.
ENDPOINT_NAME_MAX = 40
EndpointName = Annotated[str, Field(min_length=1, max_length=ENDPOINT_NAME_MAX,
                                    pattern=DNS_LABEL_PATTERN,
                                    description="The endpoint's name (a DNS label, <= 40).")]
# An S3 URI (s3://bucket/prefix) or a Hugging Face model id (`org/name`, or `name`).
MODEL_PATTERN = (r"^(s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/[A-Za-z0-9._\-/]*)?"
                 r"|[A-Za-z0-9][A-Za-z0-9._\-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._\-]{0,95})?)$")
IMAGE_PATTERN = r"^[a-z0-9][a-z0-9._\-/:@]{0,254}$"
MAX_REPLICAS = 32
Engine = Literal["vllm", "sglang"]
Exposure = Literal["service", "load_balancer"]
Dtype = Literal["auto", "bfloat16", "float16", "float32"]
PipelineParallel = Annotated[int, Field(ge=1, le=16, description=(
    "Pipeline stages (vLLM); GPUs per replica = tensor x pipeline."))]


@dataclass(frozen=True, kw_only=True)
class EndpointRequest:
    """Deploy a model with vLLM or SGLang onto one instance group (self-managed)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: EndpointName
    instance_group: Annotated[str, Field(min_length=1, max_length=DNS_LABEL_MAX,
                                         pattern=DNS_LABEL_PATTERN,
                                         description="The instance group its pods run on.")]
    model: Annotated[str, Field(min_length=1, max_length=512, pattern=MODEL_PATTERN,
                                description="s3://bucket/prefix of the weights, or a "
                                "Hugging Face model id (org/name).")]
    engine: Annotated[Engine, Field(description="The serving engine.")] = "vllm"
    image: Annotated[str | None, Field(max_length=255, pattern=IMAGE_PATTERN, description=(
        "The engine's container image; default: a pinned release of the engine."))] = None
    tensor_parallel: Annotated[int, Field(ge=1, le=64, description=(
        "GPUs per replica (tensor parallelism); at most the GPUs of one node."))] = 1
    pipeline_parallel: PipelineParallel = 1
    max_model_len: Annotated[int | None, Field(ge=128, le=1_048_576, description=(
        "Context length; default: the model's."))] = None
    dtype: Annotated[Dtype, Field(description="Weights and activations dtype.")] = "auto"
    replicas: Annotated[int, Field(ge=1, le=MAX_REPLICAS, description="Pods.")] = 1
    exposure: Annotated[Exposure, Field(description=(
        "service: ClusterIP only; load_balancer: also an external load balancer."))] = "service"
    dry_run: Annotated[bool, Field(description="Return the plan without acting.")] = False


# What an update may change: the pod template only (name, engine, group and exposure stay).
UPDATABLE = ("image", "model", "tensor_parallel", "pipeline_parallel", "max_model_len", "dtype")


@dataclass(frozen=True, kw_only=True)
class EndpointUpdate:
    """Change an endpoint's pod template: a rolling update ending with a smoke request; a
    failure rolls back. Fields left out stay as they are."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    image: Annotated[str | None, Field(max_length=255, pattern=IMAGE_PATTERN,
                                       description="The engine's container image.")] = None
    model: Annotated[str | None, Field(min_length=1, max_length=512, pattern=MODEL_PATTERN,
                                       description="s3:// prefix or Hugging Face id.")] = None
    tensor_parallel: Annotated[int | None, Field(ge=1, le=64)] = None
    pipeline_parallel: Annotated[int | None, Field(ge=1, le=16)] = None
    max_model_len: Annotated[int | None, Field(ge=128, le=1_048_576)] = None
    dtype: Dtype | None = None
    dry_run: Annotated[bool, Field(description="Return the plan without acting.")] = False

    def changes(self) -> dict[str, object]:
        """The fields the caller named."""
        return {k: getattr(self, k) for k in UPDATABLE if getattr(self, k) is not None}
