"""A managed endpoint: the InferenceEndpointConfig the HyperPod inference operator serves.

Pure. Fields from ../shared/crds/hyperpod-inference/
inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml (v1): `modelName`,
`instanceType` (pattern `^ml\\..*`), `replicas`, `modelSourceConfig` {modelSourceType s3,
s3Storage {bucketName, region}, modelLocation}, `worker` {image, args, modelInvocationPort,
modelVolumeMount, resources}, optional `loadBalancer`, and `metrics` {enabled,
modelMetrics.port}: the CRD's default port is 8080 while vLLM listens on 8000, and AWS docs
(sagemaker-hyperpod-model-deployment-deploy-ftm) say "the `port` value needs to be the same as
the `containerPort` value under `modelInvocationPort`", so the port is stated (without it the
workspace has no `vllm:*` sample and managed autoscaling never moves). The model must sit
under the cluster bucket's `models/` prefix: the operator's execution role may read nothing else
(domain/features/inference_operator.py); FSx and JumpStart models: managed_sources.py.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.catalog import InstanceType
from podplane.domain.errors import Conflict, InvalidInput
from podplane.domain.features.inference_operator import MODEL_PREFIX
from podplane.domain.inference.engines import ENGINES

API_VERSION = "inference.sagemaker.aws.amazon.com/v1"
KIND = "InferenceEndpointConfig"
PORT = 8000
MODEL_PATH = "/opt/ml/model"
GPU = "nvidia.com/gpu"
Manifest = dict[str, Any]


def require_operator(enabled: bool, cluster: str) -> None:
    """A managed endpoint needs the operator: refused (409), nothing created, when it is off."""
    if not enabled:
        raise Conflict(f"Cluster {cluster!r} has no HyperPod inference operator.",
                       hint="Enable the inference-operator feature (feature_set), or deploy "
                       "self-managed (vLLM or SGLang).")


def model_location(model: str, bucket: str) -> str:
    """`s3://<bucket>/models/<path>` -> `models/<path>`; anything else is refused."""
    prefix = f"s3://{bucket}/{MODEL_PREFIX}"
    if not model.startswith(prefix) or len(model) == len(prefix):
        raise InvalidInput(f"A managed endpoint's model must be under {prefix} (the operator's "
                           "role reads only there).", field="model",
                           hint=f"Copy the weights to {prefix}<name>/ first.")
    return model.removeprefix(f"s3://{bucket}/").rstrip("/")


def labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/managed-by": "podplane",
            "app.kubernetes.io/component": "inference-endpoint",
            "podplane.io/endpoint": name, "podplane.io/engine": "managed"}


def render(name: str, model: str, bucket: str, region: str, instance_type: InstanceType,
           *, tensor_parallel: int = 1, replicas: int = 1, image: str | None = None,
           load_balancer: bool = False, fsx: Manifest | None = None) -> Manifest:
    """The config; `fsx` is the `modelSourceConfig` of an `fsx:` model
    (managed_sources.fsx_source), else the model is in the cluster's bucket."""
    if instance_type.gpu_count == 0:
        raise InvalidInput(f"{instance_type.name} has no GPUs.", field="instance_group")
    if tensor_parallel > instance_type.gpu_count:
        raise InvalidInput(f"tensor_parallel={tensor_parallel}, but {instance_type.name} has "
                           f"{instance_type.gpu_count} GPU(s) per node.", field="tensor_parallel",
                           hint=f"Use at most {instance_type.gpu_count}.")
    gpus = {GPU: tensor_parallel}
    spec: Manifest = {
        "modelName": name, "instanceType": instance_type.name, "replicas": replicas,
        "modelSourceConfig": fsx or {"modelSourceType": "s3",
                                     "s3Storage": {"bucketName": bucket, "region": region},
                                     "modelLocation": model_location(model, bucket)},
        "worker": {"image": image or ENGINES["vllm"].image,
                   "args": ["--model", MODEL_PATH, "--served-model-name", name,
                            "--tensor-parallel-size", str(tensor_parallel),
                            "--port", str(PORT)],
                   "modelInvocationPort": {"containerPort": PORT, "name": "http"},
                   "modelVolumeMount": {"name": "model-weights", "mountPath": MODEL_PATH},
                   "resources": {"requests": dict(gpus), "limits": dict(gpus)}},
        "metrics": {"enabled": True, "modelMetrics": {"port": PORT}}}
    if load_balancer:
        spec["loadBalancer"] = {"healthCheckPath": "/health"}
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": name, "namespace": "default", "labels": labels(name)},
            "spec": spec}


def container(config: Manifest) -> Manifest:
    """The image and arguments the operator runs for this config's worker (what a rollout
    waits for in the pods)."""
    worker = config["spec"].get("worker") or {}
    return {"image": worker.get("image"), "args": worker.get("args")}


def as_it_was(config: Manifest) -> Manifest:
    """The config as podplane applies it again (a rollback): identity and spec only."""
    meta = config["metadata"]
    return {"apiVersion": config["apiVersion"], "kind": config["kind"],
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "default"),
                         "labels": dict(meta.get("labels") or {})},
            "spec": config["spec"]}
