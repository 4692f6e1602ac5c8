"""The inference operator's JumpStartModel kind (../shared/crds/hyperpod-inference
inference.sagemaker.aws.amazon.com_jumpstartmodels.yaml; AWS docs "Deploy models from
JumpStart using kubectl"): the operator looks the model up in the SageMaker hub named by
`spec.model.modelHubName` (default SageMakerPublicHub) at `spec.model.modelVersion` and runs
the hub's inference container on `spec.server.instanceType`, then reports the same status as
an InferenceEndpointConfig (Deployment + Service owned by the model, `status.state`).

The sandbox's public hub holds a few models; anything else is DeploymentFailed (stricter than
sources that say nothing about an unknown id). A model whose hub content needs a licence
accepted is DeploymentFailed unless `spec.model.acceptEula` is true (the CRD: "For models that
require a Model Access Config, specify True or False to indicate whether model terms of use
have been accepted"). The container is the hub's LMI image with vLLM as its backend
(OPTION_ROLLING_BATCH, AWS docs "Large model inference container configurations"), serving on
8080, the port JumpStart's LMI containers listen on.
"""

from __future__ import annotations

from dataclasses import dataclass

from podplane_sandbox.kube.addon_manifests import INFERENCE_GROUP
from podplane_sandbox.kube.controllers.inference_operator import InferenceOperator, Obj
from podplane_sandbox.kube.util import clone

JUMPSTARTS = f"{INFERENCE_GROUP}/jumpstartmodels"
PUBLIC_HUB = "SageMakerPublicHub"
LMI_IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
PORT = 8080


@dataclass(frozen=True)
class HubModel:
    versions: tuple[str, ...]
    gated: bool = False


# AWS docs "Deploy models from JumpStart using kubectl" (deepseek-llm-r1-distill-qwen-1-5b at
# 2.0.4); Meta's Llama models in JumpStart need their licence accepted.
HUB = {"deepseek-llm-r1-distill-qwen-1-5b": HubModel(("2.0.4",)),
       "meta-textgeneration-llama-3-1-8b-instruct": HubModel(("2.8.0",), gated=True)}


class JumpStartOperator(InferenceOperator):
    primary = JUMPSTARTS
    kind = "JumpStartModel"

    def resolved(self, config: Obj) -> tuple[Obj, str | None]:
        spec = config.get("spec") or {}
        model = spec.get("model") or {}
        hub, model_id = model.get("modelHubName") or PUBLIC_HUB, model.get("modelId")
        found = HUB.get(str(model_id)) if hub == PUBLIC_HUB else None
        if found is None:
            return config, f"model {model_id!r} was not found in hub {hub}"
        version = model.get("modelVersion") or found.versions[-1]
        if version not in found.versions:
            return config, f"model {model_id} has no version {version} in hub {hub}"
        if found.gated and not model.get("acceptEula"):
            return config, (f"model {model_id} requires its end-user licence agreement to be "
                            "accepted (spec.model.acceptEula)")
        worker = clone(config)
        worker["spec"]["worker"] = {
            "image": LMI_IMAGE, "modelInvocationPort": {"containerPort": PORT, "name": "http"},
            "environmentVariables": [{"name": "OPTION_ROLLING_BATCH", "value": "vllm"},
                                     {"name": "HF_MODEL_ID", "value": "/opt/ml/model"}],
            "modelVolumeMount": {"name": "model-weights", "mountPath": "/opt/ml/model"},
            "resources": {"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 1}}}
        worker["spec"]["instanceType"] = (spec.get("server") or {}).get("instanceType")
        return worker, None
