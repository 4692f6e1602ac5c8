"""The endpoint request, field by field: the REST body and the MCP tool's input schema derive
from this declaration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field

from podplane.domain.effects import DryRun
from podplane.domain.inference.router import RouterPolicy
from podplane.domain.inference.source_paths import descending
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN

# The name becomes the Deployment's and the Service's name and a label value; the Deployment's
# pods are `<name>-<replicaset hash>-<5>`: keep room for those suffixes within 63.
ENDPOINT_NAME_MAX = 40
EndpointName = Annotated[str, Field(min_length=1, max_length=ENDPOINT_NAME_MAX,
                                    pattern=DNS_LABEL_PATTERN,
                                    description="Endpoint.")]
# An S3 URI (s3://bucket/prefix) or a Hugging Face model id (`org/name`, or `name`); managed
# only: `fsx:<path>` or `jumpstart:<id>[@<version>]` (managed_sources.py).
MODEL_PATTERN = (r"^(s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/[A-Za-z0-9._\-/]*)?"
                 r"|fsx:[A-Za-z0-9._\-/]{1,400}|jumpstart:[A-Za-z0-9\-]{1,63}(@[0-9.]{5,14})?"
                 r"|[A-Za-z0-9][A-Za-z0-9._\-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._\-]{0,95})?)$")
IMAGE_PATTERN = r"^[a-z0-9][a-z0-9._\-/:@]{0,254}$"
MAX_REPLICAS = 32
Engine = Literal["vllm", "sglang"]
# An IPv4 or IPv6 CIDR (loadBalancerSourceRanges takes CIDRs; Kubernetes API, ServiceSpec).
Cidr = Annotated[str, Field(max_length=43, pattern=(
    r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$|^[0-9A-Fa-f:]{2,39}/[0-9]{1,3}$"))]
Exposure = Literal["service", "load_balancer"]
Dtype = Literal["auto", "bfloat16", "float16", "float32"]
PipelineParallel = Annotated[int, Field(ge=1, le=16, description=(
    "Stages (vLLM); GPUs = tensor x pipeline."))]


@dataclass(frozen=True, kw_only=True)
class Autoscaling:
    """KEDA on the engine's requests per pod."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    min_replicas: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=MAX_REPLICAS)]
    metric: Literal["running", "waiting"] = "running"
    target: Annotated[float, Field(gt=0, description="Per pod.")] = 8.0
    cooldown_seconds: Annotated[int, Field(ge=0, le=3600)] = 300


@dataclass(frozen=True, kw_only=True)
class EndpointRequest:
    """Deploy a model with vLLM or SGLang onto one instance group (self-managed)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: EndpointName
    instance_group: Annotated[str, Field(min_length=1, max_length=DNS_LABEL_MAX,
                                         pattern=DNS_LABEL_PATTERN,
                                         description="Instance group.")]
    model: Annotated[str, Field(min_length=1, max_length=512, pattern=MODEL_PATTERN,
                                description="s3://, HF id; managed: fsx:path, jumpstart:id."),
                     AfterValidator(descending("model"))]
    engine: Engine = "vllm"
    image: Annotated[str | None, Field(max_length=255, pattern=IMAGE_PATTERN, description=(
        "Default: the engine's pinned release."))] = None
    tensor_parallel: Annotated[int, Field(ge=1, le=64, description="GPUs per replica.")] = 1
    pipeline_parallel: PipelineParallel = 1
    max_model_len: Annotated[int | None, Field(ge=128, le=1_048_576, description=(
        "Default: the model's."))] = None
    dtype: Dtype = "auto"
    replicas: Annotated[int, Field(ge=1, le=MAX_REPLICAS, description="Pods.")] = 1
    exposure: Annotated[Exposure, Field(description=(
        "load_balancer adds a load balancer, internal to the VPC unless `public`."))] = "service"
    public: Annotated[bool, Field(description=(
        "An internet-facing load balancer: admin only, with source_ranges and confirm."))] = \
        False
    source_ranges: Annotated[list[Cidr], Field(max_length=16, description=(
        "CIDRs allowed to reach the load balancer."))] = \
        field(default_factory=list)
    confirm: Annotated[bool, Field(description=(
        "Required with public=true, once the user agreed."))] = False
    routing: Annotated[Literal["prefixaware", "kvaware", "session", "roundrobin"] | None,
                       Field(description="Managed: intelligent routing.")] = None
    kv_cache: Annotated[Literal["l1", "tieredstorage", "redis"] | None, Field(description=(
        "Managed: KV cache, L1 CPU memory (+ L2 backend)."))] = None
    kv_cache_url: Annotated[str | None, Field(max_length=300, description=(
        "Redis URL (kv_cache=redis)."))] = None
    router: Annotated[RouterPolicy | None, Field(description=(
        "SGLang router policy (sglang)."))] = None
    kind: Annotated[Literal["self_managed", "managed"], Field(description=(
        "managed: the HyperPod inference operator serves it."))] = "self_managed"
    accept_eula: Annotated[bool, Field(description=(
        "jumpstart: the user accepted the model's licence (gated models)."))] = False
    autoscaling: Autoscaling | None = None
    dry_run: DryRun = False


# What an update may change: the pod template only (name, engine, group and exposure stay).
UPDATABLE = ("image", "model", "tensor_parallel", "pipeline_parallel", "max_model_len", "dtype")


@dataclass(frozen=True, kw_only=True)
class EndpointUpdate:
    """Change an endpoint's pod template: a rolling update ending with a smoke request; a
    failure rolls back. Fields left out stay as they are."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    image: Annotated[str | None, Field(max_length=255, pattern=IMAGE_PATTERN,
                                       description="Engine image.")] = None
    model: Annotated[str | None, Field(min_length=1, max_length=512, pattern=MODEL_PATTERN,
                                       description="s3:// prefix or Hugging Face id."),
                     AfterValidator(descending("model"))] = None
    tensor_parallel: Annotated[int | None, Field(ge=1, le=64)] = None
    pipeline_parallel: Annotated[int | None, Field(ge=1, le=16)] = None
    max_model_len: Annotated[int | None, Field(ge=128, le=1_048_576)] = None
    dtype: Dtype | None = None
    autoscaling: Annotated[Autoscaling | Literal["off"] | None, Field(description=(
        "Set, or \"off\"; send it alone."))] = None
    dry_run: DryRun = False

    def changes(self) -> dict[str, object]:
        """The fields the caller named."""
        return {k: getattr(self, k) for k in UPDATABLE if getattr(self, k) is not None}
