"""JumpStart's public content bucket, `jumpstart-cache-prod-<region>`, for the models of the
sandbox's JumpStart hub (kube/controllers/jumpstart_operator.py `HUB`), made on first use in
an account that is not the caller's (the bucket belongs to AWS).

Layout (sagemaker-python-sdk: `jumpstart/constants.py` JUMPSTART_DEFAULT_MANIFEST_FILE_S3_KEY,
`jumpstart/types.py` JumpStartModelHeader / JumpStartModelSpecs, `artifacts/model_uris.py`):
`models_manifest.json` at the root lists {model_id, version, min_version, spec_key}; each spec
names its hosting artifacts. The LLMs are uncompressed prefixes
(`hosting_artifact_s3_data_type: S3Prefix`, `hosting_artifact_compression_type: None`) of
Hugging Face style files. A gated model's spec says `gated_bucket: true`: its artifacts are in
`jumpstart-private-cache-prod-<region>`, which the sandbox does not serve to anyone.

Who may read it: everyone may read objects and list (the bucket policy names "*"): tools
fetch the manifest over plain unsigned HTTPS (awslabs/generative-ai-cdk-constructs, its
JumpStart model generator) and the SDK lists an artifact prefix with the caller's credentials
(`curated_hub/accessors/file_generator.py`). A caller in another account still needs its own
identity policy to allow it (s3_access.py: cross-account evaluation).
"""

from __future__ import annotations

import json
import re

BUCKET = re.compile(r"^jumpstart-cache-prod-([a-z]{2}(-[a-z]+)+-\d)$")
OWNER = "210987654321"  # stands for AWS's JumpStart account (not the caller's)
MIN_SDK = "2.189.0"


def artifact_prefix(model_id: str, version: str) -> str:
    family = model_id.split("-", 1)[0]
    return f"{family}-llm/{model_id}/artifacts/inference-prepack/v{version}/"


def _spec(model_id: str, version: str, gated: bool) -> dict[str, object]:
    key = artifact_prefix(model_id, version)
    return {"model_id": model_id, "version": version, "min_sdk_version": MIN_SDK,
            "hosting_artifact_key": key, "hosting_prepacked_artifact_key": key,
            "hosting_artifact_s3_data_type": "S3Prefix",
            "hosting_artifact_compression_type": "None", "gated_bucket": gated}


def ensure(bucket: str) -> None:
    """Make the bucket (objects and policy) when `bucket` is a JumpStart content bucket that
    does not exist yet; anything else is left alone."""
    m = BUCKET.match(bucket)
    if m is None:
        return
    from moto.s3.models import s3_backends

    from podplane_sandbox.aws.moto_side import bucket_owner
    from podplane_sandbox.kube.controllers.jumpstart_operator import HUB
    from podplane_sandbox.kube.model_hub import model_files

    if bucket_owner(bucket) is not None:
        return
    s3 = s3_backends[OWNER]["aws"]
    s3.create_bucket(bucket, m.group(1))
    manifest = []
    for model_id, model in sorted(HUB.items()):
        for version in model.versions:
            spec_key = f"community_models/{model_id}/specs_v{version}.json"
            manifest.append({"model_id": model_id, "version": version,
                             "min_version": MIN_SDK, "spec_key": spec_key})
            s3.put_object(bucket, spec_key, json.dumps(_spec(model_id, version,
                                                             model.gated)).encode())
            if not model.gated:
                for name, data in model_files(model_id).items():
                    s3.put_object(bucket, artifact_prefix(model_id, version) + name, data)
    s3.put_object(bucket, "models_manifest.json", json.dumps(manifest).encode())
    arn = f"arn:aws:s3:::{bucket}"
    s3.put_bucket_policy(bucket, json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "PublicRead", "Effect": "Allow", "Principal": "*",
         "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": [arn, f"{arn}/*"]}]}).encode())
