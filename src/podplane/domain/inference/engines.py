"""The two engines podplane deploys self-managed: image, port, health path and arguments.

Sources: vLLM's OpenAI-compatible server (docs.vllm.ai, "OpenAI-Compatible Server" and "Engine
Arguments": `--model`, `--served-model-name`, `--tensor-parallel-size`, `--max-model-len`,
`--dtype`, `--port`, `--pipeline-parallel-size`, default port 8000, `GET /health`; S3
weights through `--load-format runai_streamer`, "Loading models with Run:ai Model Streamer");
SGLang's server (docs.sglang.ai, "Server Arguments": `python3 -m sglang.launch_server
--model-path --tp --context-length --dtype --host --port`, default port 30000, `GET /health`;
the upstream docker/compose.yaml runs exactly that entrypoint; `/metrics` only with
`--enable-metrics`, docs.sglang.ai "Production Metrics"). vLLM serves `/metrics` always.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.domain.errors import InvalidInput
from podplane.domain.inference.managed_sources import refuse_for_self_managed


@dataclass(frozen=True)
class EngineSpec:
    name: str
    image: str       # the pinned default
    port: int
    health_path: str
    command: tuple[str, ...]


VLLM = EngineSpec("vllm", "docker.io/vllm/vllm-openai:v0.9.0", 8000, "/health",
                  ("python3", "-m", "vllm.entrypoints.openai.api_server"))
# A published tag (pulled by name in sgl-project/sglang#7568); cu124, because newer cu12x tags
# need a driver that supports CUDA 12.9 and fail the NVIDIA prestart hook on older nodes.
SGLANG = EngineSpec("sglang", "docker.io/lmsysorg/sglang:v0.4.6.post5-cu124", 30000, "/health",
                    ("python3", "-m", "sglang.launch_server"))
ENGINES = {e.name: e for e in (VLLM, SGLANG)}


def arguments(engine: EngineSpec, request: dict[str, Any]) -> list[str]:
    """The engine's command-line for one endpoint; the served model name is the endpoint's."""
    model, name, tp = request["model"], request["name"], request.get("tensor_parallel", 1)
    refuse_for_self_managed(model)
    length, dtype = request.get("max_model_len"), request.get("dtype", "auto")
    pp = int(request.get("pipeline_parallel") or 1)
    if engine is VLLM:
        args = ["--model", model, "--served-model-name", name,
                "--tensor-parallel-size", str(tp), "--dtype", dtype,
                "--host", "0.0.0.0", "--port", str(engine.port)]
        if pp > 1:  # vLLM docs, "Distributed inference and serving"
            args += ["--pipeline-parallel-size", str(pp)]
        if model.startswith("s3://"):
            args += ["--load-format", "runai_streamer"]
        if length:
            args += ["--max-model-len", str(length)]
        return args
    if pp > 1:
        raise InvalidInput("podplane deploys SGLang with tensor parallelism only.",
                           field="pipeline_parallel", hint="Use engine=vllm, or "
                           "pipeline_parallel=1 with a larger tensor_parallel.")
    if model.startswith("s3://"):
        raise InvalidInput("SGLang cannot read weights from S3 directly; podplane does not "
                           "download models yet.", field="model",
                           hint="Use engine=vllm for an s3:// model, or a Hugging Face id.")
    args = ["--model-path", model, "--served-model-name", name, "--tp", str(tp),
            "--dtype", dtype, "--host", "0.0.0.0", "--port", str(engine.port),
            "--enable-metrics"]
    if length:
        args += ["--context-length", str(length)]
    return args
