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
    max_model_len: Annotated[int | None, Field(ge=128, le=1_048_576, description=(
        "Context length; default: the model's."))] = None
    dtype: Annotated[Dtype, Field(description="Weights and activations dtype.")] = "auto"
    replicas: Annotated[int, Field(ge=1, le=MAX_REPLICAS, description="Pods.")] = 1
    exposure: Annotated[Exposure, Field(description=(
        "service: in-cluster only (ClusterIP); load_balancer: also an external load "
        "balancer."))] = "service"
    dry_run: Annotated[bool, Field(description="Return the plan without acting.")] = False
