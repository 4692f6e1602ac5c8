"""EKS-style bearer tokens: "k8s-aws-v1." + base64url(presigned STS GetCallerIdentity URL).

The emulator cannot verify the signature (it does not know the caller's secret key), so it
checks what it can: the shape of the presigned URL, that it is for GetCallerIdentity, and that
the x-k8s-aws-id header naming the cluster is part of the signature (or, for tools that send
it that way, a query parameter carrying the cluster name)."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import parse_qs, urlsplit

PREFIX = "k8s-aws-v1."
_REQUIRED = (
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Signature",
    "X-Amz-SignedHeaders",
)


def cluster_of(header: str | None) -> str | None:
    """The cluster the token names ("*" when it is bound to a signed x-k8s-aws-id), else None."""
    if not header or not header.startswith("Bearer "):
        return None
    token = header[len("Bearer ") :].strip()
    if not token.startswith(PREFIX):
        return None
    body = token[len(PREFIX) :]
    try:
        url = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    parts = urlsplit(url)
    query = {k.lower(): v[0] for k, v in parse_qs(parts.query).items()}
    if parts.scheme not in ("https", "http") or parts.path not in ("", "/"):
        return None
    if query.get("action") != "GetCallerIdentity" or any(k.lower() not in query for k in _REQUIRED):
        return None
    if not re.fullmatch(r"[0-9a-f]{64}", query["x-amz-signature"]):
        return None
    if query.get("x-k8s-aws-id"):
        return query["x-k8s-aws-id"]
    if "x-k8s-aws-id" in query["x-amz-signedheaders"].split(";"):
        return "*"
    return None
