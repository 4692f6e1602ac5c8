"""IAM roles and S3 buckets for a cluster, looked up by name before they are created."""

from __future__ import annotations

import json
from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.services.cluster_network import CLUSTER_TAG, MANAGED_TAG

EKS_POLICIES = ("arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",)
HYPERPOD_POLICIES = ("arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy",)


def role_names(cluster: str) -> dict[str, str]:
    return {"eks": f"podplane-{cluster}-eks"[:64], "hyperpod": f"podplane-{cluster}-hyperpod"[:64],
            "s3csi": f"podplane-{cluster}-s3csi"[:64]}


def _trust(service: str) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": service},
        "Action": ["sts:AssumeRole", "sts:TagSession"]}]})


async def ensure_role(aws: AwsCaller, cluster: str, name: str, service: str,
                      managed: tuple[str, ...] = (), inline: dict[str, Any] | None = None) -> str:
    found = await aws.maybe("iam", "get_role", RoleName=name)
    if found is None:
        found = await aws.call("iam", "create_role", RoleName=name,
                               AssumeRolePolicyDocument=_trust(service),
                               Tags=[{"Key": CLUSTER_TAG, "Value": cluster},
                                     {"Key": MANAGED_TAG, "Value": "true"}])
    attached = await aws.call("iam", "list_attached_role_policies", RoleName=name)
    have = {p["PolicyArn"] for p in attached["AttachedPolicies"]}
    for arn in managed:
        if arn not in have:
            await aws.call("iam", "attach_role_policy", RoleName=name, PolicyArn=arn)
    if inline is not None:
        await aws.call("iam", "put_role_policy", RoleName=name, PolicyName="podplane",
                       PolicyDocument=json.dumps(inline))
    return str(found["Role"]["Arn"])


def bucket_policy(bucket: str) -> dict[str, Any]:
    """Least privilege for the Mountpoint CSI driver: this bucket only."""
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": f"arn:aws:s3:::{bucket}"},
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload",
                                       "s3:DeleteObject"],
         "Resource": f"arn:aws:s3:::{bucket}/*"}]}


async def ensure_bucket(aws: AwsCaller, cluster: str, bucket: str, region: str) -> str:
    if await aws.maybe("s3", "get_bucket_location", Bucket=bucket) is None:
        where = {} if region == "us-east-1" else {
            "CreateBucketConfiguration": {"LocationConstraint": region}}
        await aws.call("s3", "create_bucket", Bucket=bucket, **where)
        await aws.call("s3", "put_bucket_tagging", Bucket=bucket, Tagging={"TagSet": [
            {"Key": CLUSTER_TAG, "Value": cluster}, {"Key": MANAGED_TAG, "Value": "true"}]})
    return bucket


LIFECYCLE_SCRIPT = """#!/bin/bash
# podplane lifecycle script: HyperPod on EKS needs no node setup beyond the defaults.
set -euo pipefail
echo "podplane on_create: $(hostname) ready"
"""


async def ensure_lifecycle_script(aws: AwsCaller, bucket: str) -> str:
    key = "podplane/lifecycle/on_create.sh"
    listed = await aws.call("s3", "list_objects_v2", Bucket=bucket, Prefix=key)
    if not listed.get("KeyCount"):
        await aws.call("s3", "put_object", Bucket=bucket, Key=key,
                       Body=LIFECYCLE_SCRIPT.encode())
    return f"s3://{bucket}/podplane/lifecycle/"
