"""IAM roles and S3 buckets for a cluster, looked up by name before they are created."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.domain import iam_policies
from podplane.domain.names import derived_name
from podplane.services.clusters.network import CLUSTER_TAG, MANAGED_TAG

ROLE_KINDS = ("eks", "hyperpod", "s3csi", "training")
LIFECYCLE_PREFIX = "podplane/lifecycle/"
ON_CREATE = "on_create.sh"


def role_names(cluster: str, region: str) -> dict[str, str]:
    """IAM role names are per account: the region is in the hash, so the same cluster name in
    two regions gets two roles, and a long name is cut but never collides (IAM: <= 64)."""
    return {kind: derived_name(f"podplane-{cluster}", kind, 64, region) for kind in ROLE_KINDS}


def legacy_role_names(cluster: str) -> dict[str, str]:
    """The names podplane used before hashed names; delete still looks for them."""
    return {kind: f"podplane-{cluster}-{kind}"[:64] for kind in ROLE_KINDS}


async def ensure_role(aws: AwsCaller, cluster: str, name: str, service: str,
                      managed: tuple[str, ...] = (), inline: dict[str, Any] | None = None) -> str:
    found = await aws.maybe("iam", "get_role", RoleName=name)
    if found is None:
        found = await aws.call("iam", "create_role", RoleName=name,
                               AssumeRolePolicyDocument=json.dumps(iam_policies.trust(service)),
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


def bucket_policy(bucket: str, region: str) -> dict[str, Any]:
    return iam_policies.bucket_policy(region, bucket)


async def ensure_bucket(aws: AwsCaller, cluster: str, bucket: str, region: str) -> str:
    if await aws.maybe("s3", "get_bucket_location", Bucket=bucket) is None:
        where = {} if region == "us-east-1" else {
            "CreateBucketConfiguration": {"LocationConstraint": region}}
        await aws.call("s3", "create_bucket", Bucket=bucket, **where)
        await aws.call("s3", "put_bucket_tagging", Bucket=bucket, Tagging={"TagSet": [
            {"Key": CLUSTER_TAG, "Value": cluster}, {"Key": MANAGED_TAG, "Value": "true"}]})
    return bucket


def lifecycle_script() -> bytes:
    """The OnCreate script shipped in the package (services/clusters/lifecycle/on_create.sh)."""
    return (resources.files("podplane.services.clusters") / "lifecycle" / ON_CREATE).read_bytes()


async def ensure_lifecycle_script(aws: AwsCaller, bucket: str) -> str:
    """Upload the packaged script unless the same bytes are there (an upgrade replaces it)."""
    key = LIFECYCLE_PREFIX + ON_CREATE
    body = lifecycle_script()
    listed = await aws.call("s3", "list_objects_v2", Bucket=bucket, Prefix=key)
    etags = {o.get("ETag", "").strip('"') for o in listed.get("Contents", [])
             if o.get("Key") == key}
    if hashlib.md5(body, usedforsecurity=False).hexdigest() not in etags:
        await aws.call("s3", "put_object", Bucket=bucket, Key=key, Body=body)
    return f"s3://{bucket}/{LIFECYCLE_PREFIX}"


async def delete_identity(aws: AwsCaller, cluster: str, region: str | None) -> list[str]:
    """Delete the cluster's roles (tagged with its name) and any OIDC provider an earlier
    podplane made for it; returns what went. The bucket stays: it holds users' data."""
    names = set(legacy_role_names(cluster).values())
    if region:
        names |= set(role_names(cluster, region).values())
    gone = [role for role in sorted(names) if await _delete_role(aws, cluster, role)]
    return gone + await _delete_oidc_providers(aws, cluster)


def _ours(tags: list[dict[str, str]], cluster: str) -> bool:
    found = {t["Key"]: t["Value"] for t in tags}
    return found.get(CLUSTER_TAG) == cluster and found.get(MANAGED_TAG) == "true"


async def _delete_role(aws: AwsCaller, cluster: str, role: str) -> bool:
    found = await aws.maybe("iam", "get_role", RoleName=role)
    if found is None or not _ours(found["Role"].get("Tags", []), cluster):
        return False
    attached = await aws.call("iam", "list_attached_role_policies", RoleName=role)
    for p in attached["AttachedPolicies"]:
        await aws.call("iam", "detach_role_policy", RoleName=role, PolicyArn=p["PolicyArn"])
    for policy in (await aws.call("iam", "list_role_policies", RoleName=role))["PolicyNames"]:
        await aws.call("iam", "delete_role_policy", RoleName=role, PolicyName=policy)
    await aws.call("iam", "delete_role", RoleName=role)
    return True


async def _delete_oidc_providers(aws: AwsCaller, cluster: str) -> list[str]:
    """Older podplane versions registered the EKS OIDC issuer; Pod Identity needs none."""
    gone = []
    listed = await aws.call("iam", "list_open_id_connect_providers")
    for provider in listed.get("OpenIDConnectProviderList", []):
        arn = provider["Arn"]
        found = await aws.maybe("iam", "get_open_id_connect_provider",
                                OpenIDConnectProviderArn=arn)
        if found is not None and _ours(found.get("Tags", []), cluster):
            await aws.call("iam", "delete_open_id_connect_provider",
                           OpenIDConnectProviderArn=arn)
            gone.append(arn)
    return gone
