"""Where a managed endpoint's model comes from, as the `model` field says it (pure):

- `s3://<cluster bucket>/models/<path>`: `modelSourceType: s3` (managed.render);
- `fsx:<path>`: `modelSourceType: fsx` on the cluster's FSx for Lustre file system
  (`fsxStorage` {fileSystemId, dnsName, mountName}, `modelLocation` the path in it), which the
  fsx-lustre feature made (409 while it is off);
- `jumpstart:<model id>[@<version>]`: a JumpStartModel (../shared/crds/hyperpod-inference
  inference.sagemaker.aws.amazon.com_jumpstartmodels.yaml: `model` {modelHubName, modelId,
  modelVersion, acceptEula}, `server` {instanceType}, `replicas`); the operator finds the
  model's container in the SageMaker public hub (AWS docs "Deploy models from JumpStart
  using kubectl").
Only managed endpoints take the last two.
"""

from __future__ import annotations

import re
from typing import Any

from podplane.domain.catalog import InstanceType
from podplane.domain.errors import Conflict, InvalidInput
from podplane.domain.inference.source_paths import dot_segments

FSX, JUMPSTART = "fsx:", "jumpstart:"
PUBLIC_HUB = "SageMakerPublicHub"
# the CRD's patterns for spec.model.modelId and spec.model.modelVersion
MODEL_ID = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
VERSION = re.compile(r"^\d{1,4}\.\d{1,4}\.\d{1,4}$")
Manifest = dict[str, Any]


def is_jumpstart(model: str) -> bool:
    return model.startswith(JUMPSTART)


def refuse_for_self_managed(model: str) -> None:
    if model.startswith((FSX, JUMPSTART)):
        raise InvalidInput(f"{model.split(':')[0]}: models are served by the inference "
                           "operator only.", field="model", hint="Send kind=managed.")


def fsx_source(model: str, volume: Manifest | None, fsx_on: bool) -> Manifest:
    """`modelSourceConfig` for `fsx:<path>` on the file system of the cluster's FSx volume
    (its PersistentVolume's CSI handle and attributes)."""
    if not fsx_on:
        raise Conflict("An fsx: model needs the cluster's FSx for Lustre file system.",
                       hint="Enable the fsx-lustre feature (feature_set), or copy the model "
                       "to the bucket's models/ prefix.")
    csi = ((volume or {}).get("spec") or {}).get("csi") or {}
    if not csi.get("volumeHandle"):
        raise Conflict("The fsx-lustre feature has no file system mounted yet.",
                       hint="Wait for its operation (feature_get), then retry.")
    path = model.removeprefix(FSX).strip("/")
    if not path or dot_segments(path):  # source_paths.py
        raise InvalidInput("An fsx: model names a directory in the file system.",
                           field="model", hint="For example fsx:models/llama-3-8b.")
    attributes = csi.get("volumeAttributes") or {}
    storage = {"fileSystemId": csi["volumeHandle"]}
    for key, attribute in (("dnsName", "dnsname"), ("mountName", "mountname")):
        if attributes.get(attribute):
            storage[key] = attributes[attribute]
    return {"modelSourceType": "fsx", "fsxStorage": storage, "modelLocation": path}


def jumpstart_model(model: str, accept_eula: bool = False) -> Manifest:
    """`spec.model` of a JumpStartModel for `jumpstart:<id>[@<version>]`; `acceptEula` says
    the user accepted the model's terms (the CRD: required, default false; a gated model is
    not deployed without it)."""
    model_id, _, version = model.removeprefix(JUMPSTART).partition("@")
    if not MODEL_ID.match(model_id):
        raise InvalidInput(f"{model_id!r} is not a JumpStart model id.", field="model")
    if version and not VERSION.match(version):
        raise InvalidInput(f"JumpStart versions look like 2.0.4, not {version!r}.",
                           field="model")
    out: Manifest = {"modelHubName": PUBLIC_HUB, "modelId": model_id,
                     "acceptEula": accept_eula}
    if version:
        out["modelVersion"] = version
    return out


def refuse_eula_elsewhere(model: str, accept_eula: bool) -> None:
    """accept_eula is a JumpStart model's: 422 naming it on any other model, not ignored."""
    if accept_eula and not is_jumpstart(model):
        raise InvalidInput("accept_eula is for jumpstart: models (their licence terms).",
                           field="accept_eula", hint="Leave it out for this model.")


def render_jumpstart(name: str, model: str, instance_type: InstanceType, *, replicas: int = 1,
                     load_balancer: bool = False, labels: dict[str, str],
                     accept_eula: bool = False) -> Manifest:
    if instance_type.gpu_count == 0:
        raise InvalidInput(f"{instance_type.name} has no GPUs.", field="instance_group")
    spec: Manifest = {"model": jumpstart_model(model, accept_eula),
                      "server": {"instanceType": instance_type.name}, "replicas": replicas}
    if load_balancer:
        spec["loadBalancer"] = {"healthCheckPath": "/ping"}
    return {"apiVersion": "inference.sagemaker.aws.amazon.com/v1", "kind": "JumpStartModel",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": spec}
