"""The identity chain of tiered checkpointing, least privilege.

Training pods write checkpoints through the ServiceAccount below; EKS Pod Identity gives them
the role (AWS docs "Learn how EKS Pod Identity grants pods access to AWS services": trust
`pods.eks.amazonaws.com` with sts:AssumeRole and sts:TagSession). The role may touch only the
cluster's checkpoint prefix in podplane's bucket: no `*` action, no `*` resource (the system
we replace grants `s3:*` on `*`).
"""

from __future__ import annotations

from typing import Any

SERVICE_ACCOUNT = "tiered-checkpointing"
POLICY_NAME = "podplane-checkpoints"


def checkpoint_prefix(cluster: str) -> str:
    return f"checkpoints/{cluster}/"


def pod_identity_trust() -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": ["sts:AssumeRole", "sts:TagSession"]}]}


def checkpoint_policy(bucket: str, cluster: str) -> dict[str, Any]:
    """Read, write and delete objects under the prefix; list the bucket only there (S3's
    s3:prefix condition key, Service Authorization Reference for Amazon S3)."""
    prefix = checkpoint_prefix(cluster)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "CheckpointObjects", "Effect": "Allow",
         "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject",
                    "s3:AbortMultipartUpload"],
         "Resource": f"arn:aws:s3:::{bucket}/{prefix}*"},
        {"Sid": "ListCheckpointPrefix", "Effect": "Allow", "Action": "s3:ListBucket",
         "Resource": f"arn:aws:s3:::{bucket}",
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
    ]}
