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
from urllib.parse import parse_qsl, unquote, urlencode

from podplane_sandbox.aws import jumpstart_bucket, s3_access
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


def short_pages(environ: dict[str, Any], faults: Any) -> None:
    """The `s3_short_pages` fault: a ListObjectsV2 page holds at most `max_keys` keys. S3 may
    answer fewer keys than MaxKeys ("the response might contain fewer keys but will never
    contain more", S3 API Reference, ListObjectsV2, MaxKeys), marking the page IsTruncated with
    a NextContinuationToken; a client that reads one page misses the rest. Rewrites the
    request's `max-keys` before moto answers it."""
    if environ.get("REQUEST_METHOD") != "GET":
        return
    query = parse_qsl(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
    if ("list-type", "2") not in query:
        return
    fault = next((f for f in faults.items if f["kind"] == "s3_short_pages"), None)
    if fault is None:
        return
    cap = int(fault.get("max_keys", 2))
    asked = next((int(v) for k, v in query if k == "max-keys" and v.isdigit()), 1000)
    query = [(k, v) for k, v in query if k != "max-keys"] + [("max-keys", str(min(cap, asked)))]
    environ["QUERY_STRING"] = urlencode(query)


def refuse_anonymous(environ: dict[str, Any]) -> Response | None:
    """An unsigned request (no Authorization header, no presigned X-Amz-Credential) to a
    bucket: 403 AccessDenied unless the bucket's policy lets anyone ("*") list it or read the
    object (s3_access.py). Only reads can be allowed that way here (stricter than S3, whose
    policies could also grant anonymous writes). Path-style requests, as botocore sends to the
    sandbox's endpoint."""
    if environ.get("HTTP_AUTHORIZATION") or "X-Amz-Credential" in str(
            environ.get("QUERY_STRING", "")):
        return None
    bucket, _, key = unquote(str(environ.get("PATH_INFO", "/"))).lstrip("/").partition("/")
    if not bucket:
        return None
    jumpstart_bucket.ensure(bucket)
    if bucket_owner(bucket) is None:
        return None  # not a bucket (another service's path), or moto's NoSuchBucket
    method = environ.get("REQUEST_METHOD")
    if method in ("GET", "HEAD") and s3_access.refusal(bucket, key or None, None) is None:
        return None
    return 403, {"Content-Type": "application/xml"}, DENIED


def prepare(environ: dict[str, Any]) -> None:
    """A signed request may name JumpStart's bucket before anything made it."""
    bucket = unquote(str(environ.get("PATH_INFO", "/"))).lstrip("/").split("/", 1)[0]
    if bucket:
        jumpstart_bucket.ensure(bucket)
