"""S3 rules moto does not enforce.

`x-amz-expected-bucket-owner` (ExpectedBucketOwner): "If the account ID that you provide does not
match the actual owner of the bucket, the request fails with the HTTP status code 403 Forbidden
(access denied)" (botocore `data/s3/2006-03-01/service-2.json`, member ExpectedBucketOwner of
e.g. PutObjectRequest; S3 User Guide, "Verifying bucket ownership with bucket owner
condition"). moto ignores the header, so a product that forgot to check ownership, or checked
the wrong account, would pass against moto alone.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.moto_side import bucket_owner

Response = tuple[int, dict[str, str], bytes]
DENIED = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>"
          b"<Message>Access Denied</Message><RequestId>sandbox</RequestId></Error>")


def refuse_wrong_owner(environ: dict[str, Any]) -> Response | None:
    """403 AccessDenied when the expected owner is not the bucket's account. A bucket that does
    not exist is left to moto (404 NoSuchBucket), as S3 answers."""
    expected = environ.get("HTTP_X_AMZ_EXPECTED_BUCKET_OWNER")
    bucket = bucket_of(environ)
    if not expected or not bucket:
        return None
    owner = bucket_owner(bucket)
    if owner is None or owner == expected:
        return None
    return 403, {"Content-Type": "application/xml"}, DENIED


def bucket_of(environ: dict[str, Any]) -> str | None:
    """The bucket a request names: path style (`/bucket/key`, what botocore sends to an IP
    endpoint) or virtual-hosted style (`bucket.<endpoint host>`)."""
    host = str(environ.get("HTTP_HOST", "")).split(":")[0]
    first = host.split(".")[0]
    if "." in host and not host.replace(".", "").isdigit() and bucket_owner(first):
        return first
    path = str(environ.get("PATH_INFO", "/")).lstrip("/")
    return path.split("/", 1)[0] or None
