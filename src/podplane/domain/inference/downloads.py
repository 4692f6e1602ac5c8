"""Model download to the cluster's bucket: the request, the Kubernetes Job that does it, the
Secret that carries a Hugging Face token, and the check that the files landed.

How the pod writes to S3 (no new IAM action for podplane or the jobs): through the cluster's
Mountpoint for S3 claim (`domain.manifests.storage.CLAIM`), with the CSI driver's Pod Identity
role, as training jobs write their outputs (`domain.jobs.render`). Mountpoint writes new files
sequentially but cannot rename, chmod or overwrite an existing object unless mounted with
`--allow-overwrite` (awslabs/mountpoint-s3, doc/SEMANTICS.md). `huggingface-cli download
--local-dir` writes each file under a temporary name and renames it (huggingface_hub,
"Download files" guide: local-dir downloads), so it downloads to an emptyDir first and `cp`
then writes each file once, as a new object under `models/<name>/`; a prefix that already holds
objects is refused before anything starts.

The token: huggingface_hub reads `HF_TOKEN` from the environment (huggingface_hub docs,
"Environment variables"); the pod gets it through `valueFrom.secretKeyRef` (Kubernetes docs,
"Secrets": using Secrets as environment variables), so the Job's spec names the Secret, never
the value. The request keeps it as a `SecretStr`: its repr and JSON dump mask it.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, SecretStr

from podplane.domain.effects import DryRun
from podplane.domain.inference.engines import VLLM
from podplane.domain.inference.requests import MODEL_PATTERN
from podplane.domain.inference.source_paths import descending
from podplane.domain.jobs.kinds import MANAGED_BY, NAMESPACE
from podplane.domain.manifests.storage import CLAIM

Manifest = dict[str, Any]
PREFIX = "models/"  # what a managed endpoint reads (domain.features.inference_operator)
NAME_MAX = 40  # `dl-<name>-<8 hex>` and the pod's `-<5>` suffix stay within 63
MODEL_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$"
REVISION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._\-/]{0,99}$"  # a branch, tag or commit
COMPONENT, COMPONENT_VALUE = "app.kubernetes.io/component", "model-download"
MODEL_LABEL, DOWNLOAD_ANNOTATION = "podplane.io/model", "podplane.io/download"
TOKEN_KEY = "HF_TOKEN"
CONTAINER, SCRATCH, BUCKET_VOLUME, SOURCE_VOLUME = "download", "/scratch", "bucket", "source"
DEST, SOURCE = "/dest", "/source"
# The engine image podplane serves with already carries huggingface_hub and its CLI (a vLLM
# dependency); the node that pulls it for the download keeps it for serving.
IMAGE = VLLM.image
WEIGHTS = re.compile(r"(\.safetensors|\.bin|\.pt|\.pth|\.gguf)$")
# A Hugging Face user access token ("hf_..."): scrubbed from any text podplane shows.
TOKEN_LIKE = re.compile(r"hf_[A-Za-z0-9]{8,}")


@dataclass(frozen=True, kw_only=True)
class DownloadRequest:
    """Download a model's files to s3://<cluster bucket>/models/<name>/."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: Annotated[str, Field(min_length=1, max_length=NAME_MAX, pattern=MODEL_NAME_PATTERN,
                               description="Folder under models/.")]
    source: Annotated[str, Field(min_length=1, max_length=512, pattern=MODEL_PATTERN,
                                 description="HF id, s3://bucket/prefix/ or "
                                 "jumpstart:id[@version]."),
                      AfterValidator(descending("source"))]
    revision: Annotated[str | None, Field(max_length=100, pattern=REVISION_PATTERN,
                                          description="Branch, tag or commit.")] = None
    hf_token: Annotated[SecretStr | None, Field(
        max_length=256, description="Write-only; kept in a Secret.")] = None
    dry_run: DryRun = False

    def public(self) -> dict[str, Any]:
        """What an operation, a plan or a log may hold: everything but the token."""
        return {"name": self.name, "source": self.source, "revision": self.revision,
                "token": self.hf_token is not None}


def destination(bucket: str, name: str) -> str:
    return f"s3://{bucket}/{PREFIX}{name}/"


def names(model: str, suffix: str) -> tuple[str, str]:
    """(Job, Secret): unique per download, so a second download never meets the first's."""
    job = f"dl-{model}-{suffix}"
    return job, f"{job}-hf"


def labels(model: str) -> dict[str, str]:
    return {MANAGED_BY: "podplane", COMPONENT: COMPONENT_VALUE, MODEL_LABEL: model}


def secret(name: str, model: str, token: SecretStr) -> Manifest:
    """The only object that holds the token (base64, as Secret `data` is)."""
    value = base64.b64encode(token.get_secret_value().encode()).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels(model)},
            "data": {TOKEN_KEY: value}}


def script(hub: bool) -> str:
    """What the container runs: the hub's CLI into the emptyDir then one copy per file onto
    the mount; or a copy of the bucket prefix (mounted at /source) onto the destination."""
    if not hub:
        return f"cp -r {SOURCE}/. {DEST}/"
    local = f"{SCRATCH}/model"
    return (f'huggingface-cli download "$MODEL_REPO" --revision "$MODEL_REVISION" '
            f"--local-dir {local} && rm -rf {local}/.cache && cp -r {local}/. {DEST}/")


def job(download: dict[str, Any], job_name: str, secret_name: str | None, op_id: str,
        source_key: str | None, source_claim: str | None = None) -> Manifest:
    """The Job, from what the operation stored (pure: a resumed step renders the same). An S3
    source is read at /source: from the cluster's claim, or from `source_claim` (another
    bucket's read-only volume, download_sources.py)."""
    model = download["name"]
    hub = source_key is None
    env: list[Manifest] = []
    mounts: list[Manifest] = [{"name": BUCKET_VOLUME, "mountPath": DEST,
                               "subPath": f"{PREFIX}{model}"}]
    volumes: list[Manifest] = [{"name": BUCKET_VOLUME,
                                "persistentVolumeClaim": {"claimName": CLAIM}}]
    if hub:
        env += [{"name": "MODEL_REPO", "value": download["source"]},
                {"name": "MODEL_REVISION", "value": download.get("revision") or "main"},
                {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"}]
        if secret_name:
            env.append({"name": TOKEN_KEY, "valueFrom": {"secretKeyRef": {
                "name": secret_name, "key": TOKEN_KEY}}})
        mounts.append({"name": "scratch", "mountPath": SCRATCH})
        volumes.append({"name": "scratch", "emptyDir": {}})
    elif source_claim is None:
        mounts.append({"name": BUCKET_VOLUME, "mountPath": SOURCE, "subPath": source_key,
                       "readOnly": True})
    else:
        mounts.append({"name": SOURCE_VOLUME, "mountPath": SOURCE, "subPath": source_key,
                       "readOnly": True})
        volumes.append({"name": SOURCE_VOLUME, "persistentVolumeClaim": {
            "claimName": source_claim, "readOnly": True}})
    meta_labels = labels(model)
    container = {"name": CONTAINER, "image": IMAGE, "command": ["/bin/sh", "-c", script(hub)],
                 "env": env, "volumeMounts": mounts,
                 "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": job_name, "namespace": NAMESPACE, "labels": meta_labels,
                         "annotations": {DOWNLOAD_ANNOTATION: op_id}},
            "spec": {"backoffLimit": 0,  # a failure is reported, not retried onto the mount
                     "template": {"metadata": {"labels": meta_labels},
                                  "spec": {"restartPolicy": "Never", "containers": [container],
                                           "volumes": volumes}}}}


def landed(objects: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
    """What ListObjectsV2 shows under the prefix: files, bytes, and what a model lacks
    (config.json, one weights file, empty objects)."""
    files = {o["Key"][len(prefix):]: int(o.get("Size", 0)) for o in objects
             if o["Key"].startswith(prefix)}
    missing = []
    if files.get("config.json", 0) <= 0:
        missing.append("config.json")
    if not any(WEIGHTS.search(f) and size > 0 for f, size in files.items()):
        missing.append("a weights file (*.safetensors, *.bin, *.gguf)")
    empty = sorted(f for f, size in files.items() if size <= 0)
    return {"files": len(files), "bytes": sum(files.values()), "missing": missing,
            "empty": empty}


def scrub(text: str) -> str:
    """Text shown to people (pod logs, messages) without anything shaped like a token."""
    return TOKEN_LIKE.sub("hf_***", text)
