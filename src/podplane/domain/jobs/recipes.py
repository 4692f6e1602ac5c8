"""Recipes are data: a framework, an image, an entrypoint, a parameter schema (defaults and
bounds), resources per replica and the job kind. One renderer (`render.py`) turns any recipe
into a manifest, so adding a recipe is adding a row here.

Entrypoints follow AWS's reference jobs: `hyperpodrun` (the HyperPod elastic agent, a
torchrun-compatible launcher) for HyperPodPyTorchJob (awslabs/awsome-distributed-training,
3.test_cases/pytorch/FSDP/kubernetes/llama3_2_1b-fsdp-hpto.yaml), `torchrun` for Kubeflow's
PyTorchJob (kubeflow/training-operator docs, "PyTorch Training"). The LLaMA-Factory and
MS-Swift commands are their documented CLIs (`llamafactory-cli train`, `swift sft`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from podplane.domain.errors import InvalidInput

ParamType = Literal["int", "float", "str", "bool"]
JobKind = Literal["HyperPodPyTorchJob", "PyTorchJob"]


@dataclass(frozen=True)
class Param:
    name: str
    type: ParamType
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    def check(self, value: Any) -> Any:
        """The value, coerced to the parameter's type, or InvalidInput naming the field."""
        where = f"params.{self.name}"
        if not _is_a(value, self.type):
            raise InvalidInput(f"{where} must be a {self.type}, not {value!r}.", field=where)
        if self.minimum is not None and value < self.minimum:
            raise InvalidInput(f"{where} must be >= {self.minimum} (got {value}).", field=where)
        if self.maximum is not None and value > self.maximum:
            raise InvalidInput(f"{where} must be <= {self.maximum} (got {value}).", field=where)
        if self.choices and value not in self.choices:
            raise InvalidInput(f"{where} must be one of {list(self.choices)} (got {value!r}).",
                               field=where)
        if isinstance(value, str) and (not value or len(value) > 256
                                       or any(c in value for c in "\n\r\x00\"'`$;|&")):
            raise InvalidInput(f"{where} must be 1-256 characters without quotes, newlines "
                               "or shell characters.", field=where)
        return float(value) if self.type == "float" else value


def _is_a(value: Any, kind: ParamType) -> bool:
    """JSON's types as the recipe means them: a bool is never a number, an int is a float."""
    classes: dict[str, type | tuple[type, ...]] = {"int": int, "float": (int, float),
                                                   "str": str, "bool": bool}
    return isinstance(value, classes[kind]) and (kind == "bool" or not isinstance(value, bool))


@dataclass(frozen=True)
class Resources:
    """Per replica (pod). gpus None: every GPU of the node the pod lands on."""

    gpus: int | None = None
    cpu: str = "4"
    memory: str = "16Gi"
    efa: bool = True


@dataclass(frozen=True)
class Recipe:
    name: str
    framework: str
    description: str
    image: str
    kind: JobKind
    # the command; `{param}` placeholders and {nnodes} {nproc} {outputs} {checkpoints} {job}
    entrypoint: tuple[str, ...]
    params: tuple[Param, ...] = ()
    resources: Resources = field(default_factory=Resources)
    default_replicas: int = 1
    elastic_capable: bool = False
    # log pattern the training operator watches for hangs (FIELDS.md logMonitoringConfiguration)
    progress_pattern: str = r".*step \d+ .*loss.*"

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        """Every parameter's value (given or default), checked; unknown names refused."""
        unknown = sorted(set(given) - {p.name for p in self.params})
        if unknown:
            raise InvalidInput(f"Recipe {self.name!r} has no parameter {unknown[0]!r}.",
                               field=f"params.{unknown[0]}",
                               hint=f"Its parameters: {', '.join(p.name for p in self.params)}.")
        return {p.name: p.check(given[p.name]) if p.name in given else p.default
                for p in self.params}


def _common(lr: float, epochs: int = 3) -> tuple[Param, ...]:
    return (
        Param("learning_rate", "float", lr, "Peak learning rate.", 1e-7, 1.0),
        Param("epochs", "int", epochs, "Passes over the dataset.", 1, 100),
        Param("batch_size", "int", 8, "Per-device batch size.", 1, 1024),
        Param("dataset", "str", "/data/train", "Dataset path under /data (or a hub id)."),
        Param("save_steps", "int", 100, "Checkpoint every N steps.", 1, 100_000),
    )


PYTORCH_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
# LLaMA-Factory's README ("Build Docker"); MS-Swift's docs (SWIFT-installation.md, "Mirror")
LLAMA_FACTORY_IMAGE = "hiyouga/llamafactory:latest"
SWIFT_IMAGE = "modelscope-registry.us-west-1.cr.aliyuncs.com/modelscope-repo/modelscope:" \
    "ubuntu22.04-cuda12.6.3-py311-torch2.7.1-vllm0.10.1.1-modelscope1.29.2-swift3.8.3"
MODEL = Param("model", "str", "/models/Qwen2.5-0.5B-Instruct",
              "Base model: a path under /models or a Hugging Face id.")
HPRUN = ("hyperpodrun", "--tee=3", "--log_dir=/tmp/hyperpod", "--nnodes={nnodes}",
         "--nproc-per-node={nproc}")

RECIPES: tuple[Recipe, ...] = (
    Recipe("pytorch-ddp", "pytorch", "Plain PyTorch DistributedDataParallel training script.",
           PYTORCH_IMAGE, "HyperPodPyTorchJob",
           (*HPRUN, "/data/scripts/train_ddp.py", "--lr={learning_rate}", "--epochs={epochs}",
            "--batch-size={batch_size}", "--data={dataset}", "--save-steps={save_steps}",
            "--checkpoint-dir={checkpoints}", "--output-dir={outputs}"),
           _common(3e-4), elastic_capable=True),
    Recipe("pytorch-fsdp", "pytorch", "PyTorch FullyShardedDataParallel (AWS's FSDP test case).",
           PYTORCH_IMAGE, "HyperPodPyTorchJob",
           (*HPRUN, "/data/scripts/train_fsdp.py", "--model={model}", "--lr={learning_rate}",
            "--epochs={epochs}", "--train_batch_size={batch_size}", "--dataset={dataset}",
            "--sharding_strategy={sharding}", "--checkpoint_freq={save_steps}",
            "--checkpoint_dir={checkpoints}", "--output_dir={outputs}"),
           (*_common(1e-4), MODEL,
            Param("sharding", "str", "full", "FSDP sharding strategy.",
                  choices=("full", "hybrid", "shard_grad_op", "no_shard"))),
           default_replicas=2, elastic_capable=True),
    Recipe("llamafactory-sft", "llama-factory", "LLaMA-Factory full supervised fine-tuning.",
           LLAMA_FACTORY_IMAGE, "PyTorchJob",
           ("llamafactory-cli", "train", "--stage=sft", "--do_train=true",
            "--finetuning_type=full", "--model_name_or_path={model}",
            "--dataset_dir={dataset}", "--dataset=train", "--template={template}",
            "--learning_rate={learning_rate}", "--num_train_epochs={epochs}",
            "--per_device_train_batch_size={batch_size}", "--save_steps={save_steps}",
            "--output_dir={checkpoints}", "--logging_steps=10"),
           (*_common(1e-5), MODEL,
            Param("template", "str", "qwen", "Chat template name.",
                  choices=("qwen", "llama3", "mistral", "default")))),
    Recipe("llamafactory-lora", "llama-factory", "LLaMA-Factory LoRA fine-tuning.",
           LLAMA_FACTORY_IMAGE, "PyTorchJob",
           ("llamafactory-cli", "train", "--stage=sft", "--do_train=true",
            "--finetuning_type=lora", "--lora_rank={lora_rank}", "--lora_target=all",
            "--model_name_or_path={model}", "--dataset_dir={dataset}", "--dataset=train",
            "--template={template}", "--learning_rate={learning_rate}",
            "--num_train_epochs={epochs}", "--per_device_train_batch_size={batch_size}",
            "--save_steps={save_steps}", "--output_dir={checkpoints}", "--logging_steps=10"),
           (*_common(1e-4), MODEL,
            Param("template", "str", "qwen", "Chat template name.",
                  choices=("qwen", "llama3", "mistral", "default")),
            Param("lora_rank", "int", 8, "LoRA rank.", 1, 256))),
    Recipe("swift-sft", "ms-swift", "MS-Swift supervised fine-tuning (LoRA by default).",
           SWIFT_IMAGE, "PyTorchJob",
           ("swift", "sft", "--model", "{model}", "--train_type", "{train_type}",
            "--dataset", "{dataset}", "--learning_rate", "{learning_rate}",
            "--num_train_epochs", "{epochs}", "--per_device_train_batch_size",
            "{batch_size}", "--save_steps", "{save_steps}", "--output_dir", "{checkpoints}",
            "--logging_steps", "10"),
           (*_common(1e-4), MODEL,
            Param("train_type", "str", "lora", "Swift training type.",
                  choices=("lora", "full")))),
)

BY_NAME = {r.name: r for r in RECIPES}


def recipe(name: str) -> Recipe:
    found = BY_NAME.get(name)
    if found is None:
        raise InvalidInput(f"No recipe named {name!r}.", field="recipe",
                           hint=f"Recipes: {', '.join(BY_NAME)} (GET .../jobs/recipes).")
    return found
