"""Where a download reads, settled before its operation starts (domain/inference/
download_sources.py): the Hugging Face Hub, a prefix of the cluster's bucket, a prefix of
another bucket, or a JumpStart model's artifact prefix, looked up in JumpStart's public
manifest and spec (read anonymously: no IAM action of podplane's)."""

from __future__ import annotations

import json
from typing import Any

from podplane.cloud.ports_iam import S3Port
from podplane.domain.errors import CloudError, InvalidInput
from podplane.domain.inference import download_sources as ds

Shape = dict[str, Any]


async def resolve(s3: S3Port, source: str, bucket: str, region: str) -> Shape:
    """{source_bucket, source_key, source_region}: source_bucket is None for the Hub and for
    the cluster's own bucket (read through the cluster's claim)."""
    if source.startswith("fsx:"):
        raise InvalidInput("fsx: models are served from FSx by a managed endpoint; nothing to "
                           "download.", field="source")
    found = ds.s3_source(source)
    if found is not None:
        other = None if found.bucket == bucket else found.bucket
        return {"source_bucket": other, "source_key": found.key, "source_region": None}
    jumpstart = ds.jumpstart_id(source)
    if jumpstart is None:
        return {"source_bucket": None, "source_key": None, "source_region": None}
    model_id, version = jumpstart
    content = ds.jumpstart_bucket(region)
    manifest = await _json(s3, content, ds.MANIFEST_KEY)
    key = ds.spec_key(manifest if isinstance(manifest, list) else [], model_id, version)
    prefix = ds.artifact_prefix(await _json(s3, content, key), model_id)
    return {"source_bucket": content, "source_key": prefix, "source_region": region}


async def _json(s3: S3Port, bucket: str, key: str) -> Any:
    try:
        return json.loads(await s3.get_public_object(bucket, key))
    except CloudError as err:
        raise CloudError(f"JumpStart's s3://{bucket}/{key} could not be read: {err.message}",
                         code="jumpstart_unreadable", retryable=err.retryable,
                         hint="JumpStart may not serve this region; try again later.") from err
    except ValueError as err:
        raise CloudError(f"JumpStart's s3://{bucket}/{key} is not JSON.",
                         code="jumpstart_unreadable", retryable=False) from err
