"""Recipes are data: a framework, an image, an entrypoint, a parameter schema (defaults and
bounds), resources per replica and the job kind. One renderer (`render.py`) turns any recipe
into a manifest, so adding a recipe is adding a row here.

Entrypoints follow AWS's reference jobs: `hyperpodrun` (the HyperPod elastic agent, a
torchrun-compatible launcher) for HyperPodPyTorchJob (awslabs/awsome-distributed-training,
3.test_cases/pytorch/FSDP/kubernetes/llama3_2_1b-fsdp-hpto.yaml). `hyperpodrun` comes only with
the `hyperpod-elastic-agent` pip package, which "you must first install ... into your training
image" (AWS docs, "Using the HyperPod training operator"; pypi.org/project/hyperpod-elastic-agent,
`[project.scripts] hyperpodrun`); no public image has it. So these recipes run `sh -c "pip
install --quiet <pins> && exec hyperpodrun ..."` (`exec`: the agent is PID 1 and gets SIGTERM,
as its README asks) in the image given as parameter `image`: the stock PyTorch image installs
the agent at start; an image with it baked in (images/hyperpod-pytorch/Dockerfile) finds the
pins satisfied and downloads nothing. Their training scripts are podplane's own
(src/podplane/training_scripts/, mounted from a ConfigMap: scripts.py). `torchrun` for Kubeflow's
PyTorchJob (kubeflow/training-operator docs, "PyTorch Training"). The LLaMA-Factory and
MS-Swift commands are their documented CLIs (`llamafactory-cli train`, `swift sft`). VERL runs
as a KubeRay RayJob: `python3 -m verl.trainer.main_ppo` with Hydra overrides, as its GRPO
examples do (volcengine/verl examples/grpo_trainer/run_qwen2-7b.sh); domain/jobs/ray.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from podplane.domain.errors import InvalidInput

ParamType = Literal["int", "float", "str", "bool"]
JobKind = Literal["HyperPodPyTorchJob", "PyTorchJob", "RayJob"]

# What a free-text parameter may hold (ADR 0017): letters, digits and `._-/` only, never a
# leading `-` or `.` in a path segment (no flags, no `..`), so no value can carry a shell
# word, a Hydra override, a flag or a YAML/JSON break whatever command line it lands in.
_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"
_HUB_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?"


def _under(root: str) -> str:
    return rf"{root}(/{_SEGMENT})+"


MODEL_VALUE = rf"{_under('/models')}|{_HUB_ID}"
DATASET_VALUE = rf"{_under('/data')}|{_HUB_ID}"
DATA_FILE = _under("/data")


@dataclass(frozen=True)
class Param:
    name: str
    type: ParamType
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()  # a path that must lie under one of these (data contract)
    at_most: str | None = None  # another parameter this one may not exceed
    pattern: str = ""  # a str parameter without choices: the whole value must match
    shape: str = ""    # the pattern in words, for the refusal

    def check(self, value: Any) -> Any:
        """The value, coerced to the parameter's type, or InvalidInput naming the field."""
        where = f"params.{self.name}"
        if not _is_a(value, self.type):
            raise InvalidInput(f"{where} must be a {self.type}.", field=where)
        if self.minimum is not None and value < self.minimum:
            raise InvalidInput(f"{where} must be >= {self.minimum} (got {value}).", field=where)
        if self.maximum is not None and value > self.maximum:
            raise InvalidInput(f"{where} must be <= {self.maximum} (got {value}).", field=where)
        if self.choices and value not in self.choices:
            raise InvalidInput(f"{where} must be one of {list(self.choices)}.", field=where)
        if self.prefixes and not (str(value).startswith(self.prefixes) and ".." not in value):
            raise InvalidInput(f"{where} must be a path under {' or '.join(self.prefixes)}.",
                               field=where, hint="The shared data paths are in "
                               "docs/training.md.")
        if isinstance(value, str) and not self.choices and not (
                len(value) <= 256 and self.pattern and re.fullmatch(self.pattern, value)):
            raise InvalidInput(f"{where} must be {self.shape or 'one of the choices'} "
                               "(letters, digits and ._-/ only, at most 256).", field=where)
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
    # {scripts}
    entrypoint: tuple[str, ...]
    params: tuple[Param, ...] = ()
    resources: Resources = field(default_factory=Resources)
    default_replicas: int = 1
    elastic_capable: bool = False
    ray_version: str = ""  # RayJob recipes: spec.rayClusterSpec.rayVersion (matches the image)
    install: tuple[str, ...] = ()  # pip requirements installed before the entrypoint runs
    scripts: tuple[str, ...] = ()  # training_scripts/ files mounted at {scripts} (scripts.py)
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
        values = {p.name: p.check(given[p.name]) if p.name in given else p.default
                  for p in self.params}
        for p in self.params:
            if p.at_most and values[p.name] > values[p.at_most]:
                raise InvalidInput(f"params.{p.name} ({values[p.name]}) must not exceed "
                                   f"params.{p.at_most} ({values[p.at_most]}).",
                                   field=f"params.{p.name}")
        return values


def _common(lr: float, epochs: int = 3) -> tuple[Param, ...]:
    return (
        Param("learning_rate", "float", lr, "Peak learning rate.", 1e-7, 1.0),
        Param("epochs", "int", epochs, "Passes over the dataset.", 1, 100),
        Param("batch_size", "int", 8, "Per-device batch size.", 1, 1024),
        Param("dataset", "str", "/data/train", "Dataset path under /data (or a hub id).",
              pattern=DATASET_VALUE, shape="a path under /data or a hub id (org/name)"),
        Param("save_steps", "int", 100, "Checkpoint every N steps.", 1, 100_000),
    )


PYTORCH_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
# LLaMA-Factory's README ("Build Docker"); MS-Swift's docs (SWIFT-installation.md, "Mirror")
LLAMA_FACTORY_IMAGE = "hiyouga/llamafactory:latest"
SWIFT_IMAGE = "modelscope-registry.us-west-1.cr.aliyuncs.com/modelscope-repo/modelscope:" \
    "ubuntu22.04-cuda12.6.3-py311-torch2.7.1-vllm0.10.1.1-modelscope1.29.2-swift3.8.3"
MODEL = Param("model", "str", "/models/Qwen2.5-0.5B-Instruct",
              "Base model: a path under /models or a Hugging Face id.", pattern=MODEL_VALUE,
              shape="a path under /models or a Hugging Face id (org/name)")
HPRUN = ("hyperpodrun", "--tee=3", "--log_dir=/tmp/hyperpod", "--nnodes={nnodes}",
         "--nproc-per-node={nproc}")
# The newest release on PyPI (1.1.3; needs torch>=2.4,<2.12, so the PyTorch 2.5.1 image fits);
# transformers for the FSDP script's model (4.46.3 supports torch 2.5 and Qwen2.5).
ELASTIC_AGENT = "hyperpod-elastic-agent==1.1.3"
TRANSFORMERS = "transformers==4.46.3"
# An image reference as the distribution reference grammar has it (distribution/reference
# `reference.go`: [registry[:port]/]path[:tag][@digest], lowercase path components).
_PATH = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_VALUE = (rf"(?:[A-Za-z0-9.-]+(?::[0-9]+)?/)?{_PATH}(?:/{_PATH})*"
               r"(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(?:@sha256:[a-f0-9]{64})?")


def _image(default: str) -> Param:
    return Param("image", "str", default, "Training image. The default installs the HyperPod "
                 "elastic agent at start (needs egress to PyPI); pass an image with it baked "
                 "in (images/hyperpod-pytorch/Dockerfile) for production.",
                 pattern=IMAGE_VALUE, shape="an image reference (registry/path:tag)")


RECIPES: tuple[Recipe, ...] = (
    Recipe("pytorch-ddp", "pytorch", "Plain PyTorch DistributedDataParallel training script.",
           PYTORCH_IMAGE, "HyperPodPyTorchJob",
           (*HPRUN, "{scripts}/train_ddp.py", "--lr={learning_rate}", "--epochs={epochs}",
            "--batch-size={batch_size}", "--data={dataset}", "--save-steps={save_steps}",
            "--checkpoint-dir={checkpoints}", "--output-dir={outputs}"),
           (*_common(3e-4), _image(PYTORCH_IMAGE)), elastic_capable=True,
           install=(ELASTIC_AGENT,), scripts=("train_ddp.py",)),
    Recipe("pytorch-fsdp", "pytorch", "PyTorch FullyShardedDataParallel (AWS's FSDP test case).",
           PYTORCH_IMAGE, "HyperPodPyTorchJob",
           (*HPRUN, "{scripts}/train_fsdp.py", "--model={model}", "--lr={learning_rate}",
            "--epochs={epochs}", "--train_batch_size={batch_size}", "--dataset={dataset}",
            "--sharding_strategy={sharding}", "--checkpoint_freq={save_steps}",
            "--checkpoint_dir={checkpoints}", "--output_dir={outputs}"),
           (*_common(1e-4), MODEL,
            Param("sharding", "str", "full", "FSDP sharding strategy.",
                  choices=("full", "hybrid", "shard_grad_op", "no_shard")),
            _image(PYTORCH_IMAGE)),
           default_replicas=2, elastic_capable=True, install=(ELASTIC_AGENT, TRANSFORMERS),
           scripts=("train_fsdp.py",)),
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

# VERL on Ray (GRPO; PPO with a critic through adv_estimator=gae). Ray 2.56.0's image with vLLM
# and CUDA 13.0 (rayproject/ray-llm:2.56.0-py312-cu130, the tag KubeRay's own LLM samples use:
# ray-project/kuberay ray-operator/config/samples/ray-service.high-throughput-llm.yaml); VERL
# 0.7.0 (its release tag) is installed per job by the RayJob's runtime_env (domain/jobs/ray.py).
RAY_VERSION = "2.56.0"
RAY_IMAGE = f"rayproject/ray-llm:{RAY_VERSION}-py312-cu130"
VERL_VERSION = "0.7.0"
DATA = ("/data/",)
RECIPES += (
    Recipe("verl-grpo", "verl", "VERL reinforcement learning on a Ray cluster: GRPO, or PPO "
           "with a critic (adv_estimator=gae).", RAY_IMAGE, "RayJob",
           ("python3", "-m", "verl.trainer.main_ppo", "algorithm.adv_estimator={adv_estimator}",
            "data.train_files={train_files}", "data.val_files={val_files}",
            "data.train_batch_size={train_batch_size}",
            "data.max_prompt_length={max_prompt_length}",
            "data.max_response_length={max_response_length}",
            "actor_rollout_ref.model.path={model}",
            "actor_rollout_ref.actor.optim.lr={learning_rate}",
            "actor_rollout_ref.actor.ppo_mini_batch_size={ppo_mini_batch_size}",
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro_batch_size}",
            "actor_rollout_ref.rollout.name={rollout}", "actor_rollout_ref.rollout.n={rollout_n}",
            "actor_rollout_ref.rollout.tensor_model_parallel_size={rollout_tp}",
            "critic.model.path={model}", "trainer.logger=[console]",
            "trainer.project_name=podplane", "trainer.experiment_name={job}",
            "trainer.nnodes={nnodes}", "trainer.n_gpus_per_node={nproc}",
            "trainer.total_epochs={epochs}", "trainer.save_freq={save_freq}",
            "trainer.default_local_dir={checkpoints}"),
           (MODEL,
            Param("adv_estimator", "str", "grpo", "Advantage estimator: grpo (no critic) or "
                  "gae (PPO with a critic).", choices=("grpo", "gae")),
            Param("train_files", "str", "/data/gsm8k/train.parquet",
                  "Training prompts (parquet) under /data.", prefixes=DATA, pattern=DATA_FILE,
                  shape="a file path under /data"),
            Param("val_files", "str", "/data/gsm8k/test.parquet",
                  "Validation prompts (parquet) under /data.", prefixes=DATA,
                  pattern=DATA_FILE, shape="a file path under /data"),
            Param("rollout", "str", "vllm", "Rollout engine.", choices=("vllm", "sglang")),
            Param("rollout_n", "int", 5, "Responses sampled per prompt (GRPO's group).", 1, 64),
            Param("rollout_tp", "int", 1, "Tensor parallel size of the rollout engine.", 1, 8),
            Param("train_batch_size", "int", 256, "Prompts per training step.", 1, 8192),
            Param("ppo_mini_batch_size", "int", 64, "Prompts per actor update; at most "
                  "train_batch_size.", 1, 8192, at_most="train_batch_size"),
            Param("micro_batch_size", "int", 8, "Per-GPU micro batch.", 1, 512),
            Param("max_prompt_length", "int", 512, "Prompt tokens.", 16, 32768),
            Param("max_response_length", "int", 1024, "Response tokens.", 16, 32768),
            Param("learning_rate", "float", 1e-6, "Actor learning rate.", 1e-9, 1e-2),
            Param("epochs", "int", 15, "Passes over the prompts.", 1, 1000),
            Param("save_freq", "int", 20, "Checkpoint every N steps.", 1, 100_000)),
           Resources(cpu="16", memory="64Gi"), default_replicas=1, ray_version=RAY_VERSION,
           progress_pattern=r"^step:\d+ - .*"),
)
BY_NAME = {r.name: r for r in RECIPES}


def recipe(name: str) -> Recipe:
    found = BY_NAME.get(name)
    if found is None:
        raise InvalidInput(f"No recipe named {name!r}.", field="recipe",
                           hint=f"Recipes: {', '.join(BY_NAME)} (GET .../jobs/recipes).")
    return found
