"""Where a model download reads from besides the Hugging Face Hub: an S3 prefix (the cluster's
bucket or another one) or a JumpStart model, which is an S3 prefix in JumpStart's bucket.

Who reads the source: the Mountpoint for S3 CSI driver, with its Pod Identity role (the role
the cluster's bucket is mounted with; `domain.iam_policies.bucket_policy`). The cluster's own
bucket is read through the cluster's claim; any other bucket through a read-only volume of its
own, a static PV and its claim made for this download (Mountpoint CSI driver docs, "static
provisioning": one PV per bucket, `volumeAttributes.bucketName`; mount option `read-only`,
Mountpoint `doc/CONFIGURATION.md`). Whether that role may read the bucket is S3's decision:
in the same account an allow in the role's policy or in the bucket's policy suffices, across
accounts both must allow (S3 User Guide, "How Amazon S3 authorizes a request"). Mountpoint lists
the bucket when it mounts, so a refusal shows as the pod's FailedMount event, which the
operation reads and reports (download_steps.py) rather than waiting.

JumpStart's layout (sagemaker-python-sdk `jumpstart/constants.py`, `cache.py`, `types.py`,
`artifacts/model_uris.py`): each region's public content bucket `jumpstart-cache-prod-<region>`
holds `models_manifest.json`, a list of {model_id, version, min_version, spec_key}; the spec
at `spec_key` names the hosting artifact (`hosting_prepacked_artifact_key`, else
`hosting_artifact_key`). LLMs ship uncompressed (`hosting_artifact_s3_data_type: S3Prefix`,
`hosting_artifact_compression_type: None`): a prefix of Hugging Face style files, which is
what a download copies. A spec with `gated_bucket: true` lives in
`jumpstart-private-cache-prod-<region>`, served to SageMaker after its licence is accepted, so
it is refused here (deploy it as a managed JumpStart endpoint instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from podplane.domain.errors import InvalidInput
from podplane.domain.inference.source_paths import dot_segments
from podplane.domain.jobs.kinds import NAMESPACE

Manifest = dict[str, Any]
S3, JUMPSTART = "s3://", "jumpstart:"
# S3 User Guide, "General purpose bucket naming rules": 3-63 lowercase letters, digits, dots
# and hyphens, beginning and ending with a letter or digit.
BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")
MANIFEST_KEY = "models_manifest.json"
UNCOMPRESSED = "S3Prefix"


@dataclass(frozen=True)
class S3Source:
    bucket: str
    key: str  # without slashes at either end


def jumpstart_bucket(region: str) -> str:
    return f"jumpstart-cache-prod-{region}"


def s3_source(source: str) -> S3Source | None:
    """The bucket and key prefix of an `s3://` source; None for any other source."""
    if not source.startswith(S3):
        return None
    bucket, _, key = source[len(S3):].partition("/")
    if not BUCKET.match(bucket):
        raise InvalidInput(f"{bucket!r} is not an S3 bucket name.", field="source")
    key = key.strip("/")
    if dot_segments(key):  # it becomes a volume subPath (source_paths.py; issue 34, S10)
        raise InvalidInput("source may not have . or .. path segments.", field="source")
    if not key:
        raise InvalidInput("source must name a prefix, not the whole bucket.", field="source",
                           hint="e.g. s3://my-bucket/models/llama-3-8b/")
    return S3Source(bucket, key)


def jumpstart_id(source: str) -> tuple[str, str | None] | None:
    """(model id, version or None for the newest) of `jumpstart:<id>[@<version>]`."""
    if not source.startswith(JUMPSTART):
        return None
    model_id, _, version = source[len(JUMPSTART):].partition("@")
    return model_id, version or None


def _semver(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("."))


def spec_key(manifest: list[Manifest], model_id: str, version: str | None) -> str:
    """The spec's key for that model and version (the newest when none is given), as the
    SDK's cache picks it; a model or version the manifest lacks is a 422 on `source`."""
    entries = [e for e in manifest if e.get("model_id") == model_id]
    if not entries:
        raise InvalidInput(f"JumpStart has no model {model_id!r} in this region.",
                           field="source", hint="Use the model id JumpStart shows "
                           "(e.g. jumpstart:deepseek-llm-r1-distill-qwen-1-5b).")
    if version is None:
        return str(max(entries, key=lambda e: _semver(str(e.get("version"))))["spec_key"])
    for entry in entries:
        if entry.get("version") == version:
            return str(entry["spec_key"])
    known = ", ".join(sorted(str(e.get("version")) for e in entries))
    raise InvalidInput(f"JumpStart model {model_id} has no version {version} (it has "
                       f"{known}).", field="source")


def artifact_prefix(spec: Manifest, model_id: str) -> str:
    """The key prefix of the model's uncompressed hosting artifacts, without slashes at
    either end."""
    if spec.get("gated_bucket"):
        raise InvalidInput(f"JumpStart model {model_id} is gated: its files are served to "
                           "SageMaker only, once its licence is accepted.", field="source",
                           hint="Deploy it as a managed endpoint (model jumpstart:<id>, "
                           "accept_eula).")
    key = spec.get("hosting_prepacked_artifact_key") or spec.get("hosting_artifact_key") or ""
    if dot_segments(str(key).strip("/")):  # a subPath Kubernetes would refuse (source_paths.py)
        raise InvalidInput(f"JumpStart model {model_id}'s artifact prefix {key!r} has . or .. "
                           "segments.", field="source")
    if spec.get("hosting_artifact_s3_data_type") != UNCOMPRESSED or not str(key).endswith("/"):
        raise InvalidInput(f"JumpStart model {model_id} ships as an archive, not as files "
                           "a server reads.", field="source",
                           hint="Deploy it as a managed endpoint (model jumpstart:<id>).")
    return str(key).strip("/")


def volume_names(job: str) -> str:
    """The source volume's PV and claim share the Job's name and a `-src` suffix."""
    return f"{job}-src"


def source_volume(job: str, bucket: str, region: str | None,
                  labels: dict[str, str]) -> list[Manifest]:
    """A read-only Mountpoint volume of another bucket, for this download only: a static PV
    bound to its claim (claimRef / volumeName, Kubernetes docs "Persistent Volumes",
    reserving a PersistentVolume), with a volumeHandle unique to it."""
    name = volume_names(job)
    # Without `region`, Mountpoint finds the bucket's own region (doc/CONFIGURATION.md).
    options = ["read-only"] + ([f"region {region}"] if region else [])
    return [
        {"apiVersion": "v1", "kind": "PersistentVolume",
         "metadata": {"name": name, "labels": labels},
         "spec": {"capacity": {"storage": "1200Gi"}, "accessModes": ["ReadOnlyMany"],
                  "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                  "claimRef": {"namespace": NAMESPACE, "name": name},
                  "mountOptions": options,
                  "csi": {"driver": "s3.csi.aws.com", "volumeHandle": f"s3-csi-{name}",
                          "volumeAttributes": {"bucketName": bucket}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
         "spec": {"accessModes": ["ReadOnlyMany"], "storageClassName": "",
                  "resources": {"requests": {"storage": "1200Gi"}}, "volumeName": name}},
    ]
