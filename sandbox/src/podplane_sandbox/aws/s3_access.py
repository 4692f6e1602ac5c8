"""Whether a principal (or an anonymous caller) may list a bucket or read an object: S3's own
decision from the caller's identity policies and the bucket's policy, which moto does not make.

Sources: S3 User Guide, "How Amazon S3 authorizes a request" (a bucket operation and an object
operation are authorized against the requester's account and the bucket owner's); IAM User
Guide, "Policy evaluation logic" and "Cross-account policy evaluation logic": an explicit Deny
in any applicable policy wins; within the bucket owner's account an Allow in the identity
policies *or* in the bucket policy suffices; from another account both must allow. A bucket
policy statement applies to a caller when its Principal is `"*"` / `{"AWS": "*"}`, the
caller's role ARN, or the caller's account (id or `arn:aws:iam::<id>:root`). An anonymous
request (no signature) is allowed only by a bucket policy statement for `"*"` (S3 User Guide,
"Bucket policy examples": granting read-only permission to anonymous users). Statements are
evaluated with iam_policy.py (conditions it cannot decide are taken the strict way).
"""

from __future__ import annotations

import json
from typing import Any

from podplane_sandbox.aws.iam_policy import as_list, entity_documents, evaluate
from podplane_sandbox.aws.moto_side import bucket_owner

Doc = dict[str, Any]


def refusal(bucket: str, key: str | None, principal_arn: str | None) -> str | None:
    """None when allowed, else S3's refusal: NoSuchBucket or AccessDenied. `key` None asks
    for s3:ListBucket on the bucket, else s3:GetObject on the object."""
    owner = bucket_owner(bucket)
    if owner is None:
        return f"NoSuchBucket: The specified bucket does not exist: {bucket}"
    action = "s3:ListBucket" if key is None else "s3:GetObject"
    resource = f"arn:aws:s3:::{bucket}" + ("" if key is None else f"/{key}")
    bucket_docs = [_for(doc, principal_arn) for doc in _bucket_policy(bucket, owner)]
    by_bucket = evaluate(bucket_docs, action, resource, {}, complete=False).decision
    identity = _identity(principal_arn)
    by_identity = evaluate(identity, action, resource, {}, complete=False).decision
    if "explicitDeny" in (by_bucket, by_identity):
        allowed = False
    elif principal_arn is None:
        allowed = by_bucket == "allowed"
    elif _account(principal_arn) == owner:
        allowed = "allowed" in (by_bucket, by_identity)
    else:
        allowed = by_bucket == by_identity == "allowed"
    if allowed:
        return None
    who = principal_arn or "anonymous"
    return f"AccessDenied: {who} is not authorized to perform: {action} on resource: {resource}"


def _account(arn: str) -> str:
    parts = arn.split(":")
    return parts[4] if len(parts) > 4 else ""


def _identity(principal_arn: str | None) -> list[Doc]:
    if principal_arn is None or ":role/" not in principal_arn:
        return []
    from podplane_sandbox.aws.iam_rules import _role

    role = _role(principal_arn)
    return entity_documents([role]) if role is not None else []


def _bucket_policy(bucket: str, owner: str) -> list[Doc]:
    from moto.s3.models import s3_backends

    try:
        raw = s3_backends[owner]["aws"].get_bucket(bucket).policy
    except Exception:  # no such bucket
        return []
    return [json.loads(raw)] if raw else []


def _for(doc: Doc, principal_arn: str | None) -> Doc:
    """The statements of a bucket policy that name this caller."""
    return {"Statement": [s for s in as_list(doc.get("Statement"))
                          if isinstance(s, dict) and _names(s.get("Principal"), principal_arn)]}


def _names(principal: Any, arn: str | None) -> bool:
    if principal == "*":
        return True
    values = as_list(principal.get("AWS")) if isinstance(principal, dict) else []
    if "*" in values:
        return True
    if arn is None:
        return False
    account = _account(arn)
    return arn in values or account in values or f"arn:aws:iam::{account}:root" in values
