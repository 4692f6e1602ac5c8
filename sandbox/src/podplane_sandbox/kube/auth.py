"""EKS bearer tokens, verified as EKS verifies them.

A token is "k8s-aws-v1." + unpadded base64url of a presigned STS GetCallerIdentity URL whose
SigV4 signature covers the `x-k8s-aws-id` header. The checks follow aws-iam-authenticator's
verifier (`pkg/token/token.go`): https scheme, an STS host, path "/", only the allowed query
parameters (each once), Action=GetCallerIdentity, the cluster header signed, X-Amz-Expires in
0..900, and the token expiring 15 minutes after X-Amz-Date whatever X-Amz-Expires says. EKS
then sends the URL to STS with the header set to its own cluster name, so a token made for
another cluster fails the signature; here the sandbox recomputes that SigV4 signature with the
secret of the access key (the sandbox plays STS, AWS General Reference "Signature Version 4").

Time is the wall clock: every client signs with it (botocore, the AWS CLI, `hyp`), and the
sandbox's virtual clock runs at another speed.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import re
from collections.abc import Callable
from urllib.parse import parse_qsl, quote, urlsplit

from podplane_sandbox.contracts import Signer

PREFIX = "k8s-aws-v1."
CLUSTER_HEADER = "x-k8s-aws-id"
MAX_TOKEN_BYTES = 4096
LIFETIME_SECONDS = 15 * 60
ALLOWED = {"action", "version", "x-amz-algorithm", "x-amz-credential", "x-amz-date",
           "x-amz-expires", "x-amz-security-token", "x-amz-signature", "x-amz-signedheaders"}
STS_HOST = re.compile(r"^sts(\.[a-z]{2}(-[a-z]+)+-\d)?\.amazonaws\.com(\.cn)?$")
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class TokenRejected(Exception):
    """Why EKS would answer 401 (logged by the sandbox; the client sees only 401)."""


def bearer(header: str | None) -> str | None:
    if not header or not header.startswith("Bearer "):
        return None
    return header[len("Bearer "):].strip()


def verify(token: str, cluster: str, signer_of: Callable[[str], Signer | None],
           now: float, own_hosts: frozenset[str] = frozenset()) -> Signer:
    """The signer of a valid token for `cluster`; raises TokenRejected otherwise.

    `own_hosts` are the sandbox's own STS endpoints (host:port), accepted like AWS's STS hosts
    because in the sandbox that endpoint is STS; plain http is accepted only for them.
    """
    url = _decode(token)
    parts = urlsplit(url)
    own = parts.netloc in own_hosts
    if parts.scheme != "https" and not own:
        raise TokenRejected(f"unexpected scheme {parts.scheme!r} in pre-signed URL")
    if not own and not STS_HOST.match(parts.netloc):
        raise TokenRejected(f"unexpected hostname {parts.netloc!r} in pre-signed URL")
    if parts.path != "/":
        raise TokenRejected("unexpected path in pre-signed URL")
    query = _query(parts.query)
    _check_params(query)
    signer = _signer(query, signer_of)
    _check_signature(parts.netloc, parts.query, query, cluster, signer.secret)
    _check_time(query, now)
    return signer


def _decode(token: str) -> str:
    if len(token) > MAX_TOKEN_BYTES:
        raise TokenRejected("token is too large")
    if not token.startswith(PREFIX):
        raise TokenRejected(f"token is missing expected {PREFIX!r} prefix")
    body = token[len(PREFIX):]
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as e:
        raise TokenRejected(f"token is not base64url: {e}") from None


def _query(raw: str) -> dict[str, str]:
    query: dict[str, str] = {}
    for key, value in parse_qsl(raw, keep_blank_values=True):
        if key.lower() not in ALLOWED:
            raise TokenRejected(f"non-whitelisted query parameter {key!r}")
        if key.lower() in query:
            raise TokenRejected("query parameter with multiple values not supported")
        query[key.lower()] = value
    return query


def _check_params(query: dict[str, str]) -> None:
    if query.get("action") != "GetCallerIdentity":
        raise TokenRejected("unexpected action parameter in pre-signed URL")
    signed = [h.lower() for h in query.get("x-amz-signedheaders", "").split(";")]
    if CLUSTER_HEADER not in signed:
        raise TokenRejected(f"client did not sign the {CLUSTER_HEADER} header")
    if set(signed) - {"host", CLUSTER_HEADER}:
        raise TokenRejected("the pre-signed URL signs headers the verifier cannot send")
    try:
        expires = int(query.get("x-amz-expires", ""))
    except ValueError:
        expires = -1
    if not 0 <= expires <= LIFETIME_SECONDS:
        raise TokenRejected("invalid X-Amz-Expires parameter in pre-signed URL")
    if query.get("x-amz-algorithm") != "AWS4-HMAC-SHA256":
        raise TokenRejected("unsupported X-Amz-Algorithm")


def _signer(query: dict[str, str], signer_of: Callable[[str], Signer | None]) -> Signer:
    scope = query.get("x-amz-credential", "").split("/")
    if len(scope) != 5 or scope[3] != "sts" or scope[4] != "aws4_request":
        raise TokenRejected("malformed X-Amz-Credential")
    signer = signer_of(scope[0])
    if signer is None:
        raise TokenRejected("sts getCallerIdentity failed: InvalidClientTokenId")
    return signer


def _check_signature(host: str, raw_query: str, query: dict[str, str], cluster: str,
                     secret: str) -> None:
    pairs = [(quote(k, safe="-_.~"), quote(v, safe="-_.~"))
             for k, v in parse_qsl(raw_query, keep_blank_values=True)
             if k != "X-Amz-Signature"]
    canonical_query = "&".join(f"{k}={v}" for k, v in sorted(pairs))
    signed = query["x-amz-signedheaders"]
    values = {"host": host, CLUSTER_HEADER: cluster}
    headers = "".join(f"{h}:{values[h.lower()]}\n" for h in signed.split(";"))
    request = "\n".join(["GET", "/", canonical_query, headers, signed, EMPTY_SHA256])
    date, region, service = query["x-amz-credential"].split("/")[1:4]
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", query.get("x-amz-date", ""), scope,
                         hashlib.sha256(request.encode()).hexdigest()])
    key = f"AWS4{secret}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, query.get("x-amz-signature", "")):
        raise TokenRejected("sts getCallerIdentity failed: SignatureDoesNotMatch "
                            "(wrong secret, or a token made for another cluster)")


def _check_time(query: dict[str, str], now: float) -> None:
    try:
        signed_at = datetime.datetime.strptime(query.get("x-amz-date", ""), "%Y%m%dT%H%M%SZ")
    except ValueError:
        raise TokenRejected("X-Amz-Date parameter must be present and valid") from None
    age = now - signed_at.replace(tzinfo=datetime.UTC).timestamp()
    if age > LIFETIME_SECONDS:
        raise TokenRejected("X-Amz-Date parameter is expired (15 minute expiration)")
    if age < -LIFETIME_SECONDS:  # STS refuses requests signed too far in the future
        raise TokenRejected("X-Amz-Date is in the future")
