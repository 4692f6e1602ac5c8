"""S3Port in memory: buckets with tags, objects with their MD5 ETag (as S3 reports for a
single-part upload without SSE-KMS: S3 User Guide, "Checking object integrity")."""

from __future__ import annotations

import hashlib
from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]


class FakeS3(FakePort):
    service = "s3"

    def __init__(self) -> None:
        super().__init__()
        self.buckets: dict[str, dict[str, bytes]] = {}
        self.tags: dict[str, list[dict[str, str]]] = {}

    async def bucket_exists(self, bucket: str) -> bool:
        return bucket in self.buckets

    async def create_bucket(self, bucket: str, region: str) -> None:
        self._enter("create_bucket", bucket=bucket, region=region)
        self.buckets.setdefault(bucket, {})

    async def get_bucket_tags(self, bucket: str) -> list[dict[str, str]]:
        self._bucket("get_bucket_tagging", bucket)
        return list(self.tags.get(bucket, []))

    async def put_bucket_tagging(self, bucket: str, tags: list[dict[str, str]]) -> None:
        self._enter("put_bucket_tagging", bucket=bucket)
        self.tags[bucket] = list(tags)

    def _bucket(self, operation: str, bucket: str) -> dict[str, bytes]:
        if bucket not in self.buckets:
            raise self.refuse(operation, "NoSuchBucket", bucket)
        return self.buckets[bucket]

    async def list_objects(self, bucket: str, prefix: str) -> list[Shape]:
        objects = self._bucket("list_objects_v2", bucket)
        return [{"Key": k, "ETag": f'"{hashlib.md5(v, usedforsecurity=False).hexdigest()}"'}
                for k, v in objects.items() if k.startswith(prefix)]

    async def get_public_object(self, bucket: str, key: str) -> bytes:
        objects = self._bucket("get_object", bucket)
        if key not in objects:
            raise self.refuse("get_object", "NoSuchKey", key)
        return objects[key]

    async def put_object(self, bucket: str, key: str, body: bytes) -> None:
        self._enter("put_object", bucket=bucket, key=key)
        self._bucket("put_object", bucket)[key] = body

    async def delete_object(self, bucket: str, key: str) -> None:
        self._enter("delete_object", bucket=bucket, key=key)
        self._bucket("delete_object", bucket).pop(key, None)
