"""IAM roles and S3 buckets for a cluster, looked up by name before they are created."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import Any

from podplane.cloud.ports_iam import IamPort, S3Port
from podplane.domain import iam_policies
from podplane.domain.errors import Conflict
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


async def ensure_role(iam: IamPort, cluster: str, name: str, service: str,
                      managed: tuple[str, ...] = (), inline: dict[str, Any] | None = None) -> str:
    found = await iam.get_role(name)
    if found is None:
        found = await iam.create_role(name, json.dumps(iam_policies.trust(service)),
                                      [{"Key": CLUSTER_TAG, "Value": cluster},
                                       {"Key": MANAGED_TAG, "Value": "true"}])
    have = {p["PolicyArn"] for p in await iam.list_attached_role_policies(name)}
    for arn in managed:
        if arn not in have:
            await iam.attach_role_policy(name, arn)
    if inline is not None:
        await iam.put_role_policy(name, "podplane", json.dumps(inline))
    return str(found["Arn"])


def bucket_policy(bucket: str, region: str) -> dict[str, Any]:
    return iam_policies.bucket_policy(region, bucket)


async def ensure_bucket(s3: S3Port, cluster: str, bucket: str, region: str) -> str:
    """Create and tag the cluster's bucket, or adopt it only if podplane tagged it for this
    cluster: a bucket of that name that someone else made keeps its owner's data to itself."""
    if not await s3.bucket_exists(bucket):
        await s3.create_bucket(bucket, region)
        await s3.put_bucket_tagging(bucket, [{"Key": CLUSTER_TAG, "Value": cluster},
                                             {"Key": MANAGED_TAG, "Value": "true"}])
        return bucket
    tags = {t["Key"]: t["Value"] for t in await s3.get_bucket_tags(bucket)}
    if tags.get(MANAGED_TAG) != "true" or tags.get(CLUSTER_TAG) != cluster:
        raise Conflict(f"S3 bucket {bucket} exists but podplane did not make it for cluster "
                       f"{cluster}, so it is not adopted.",
                       hint=f"Tag it {MANAGED_TAG}=true and {CLUSTER_TAG}={cluster} if it is "
                       "meant for this cluster, or remove it; then retry this step.")
    return bucket


def lifecycle_script() -> bytes:
    """The OnCreate script shipped in the package (services/clusters/lifecycle/on_create.sh)."""
    return (resources.files("podplane.services.clusters") / "lifecycle" / ON_CREATE).read_bytes()


async def ensure_lifecycle_script(s3: S3Port, bucket: str) -> str:
    """Upload the packaged script unless the same bytes are there (an upgrade replaces it)."""
    key = LIFECYCLE_PREFIX + ON_CREATE
    body = lifecycle_script()
    etags = {o.get("ETag", "").strip('"') for o in await s3.list_objects(bucket, key)
             if o.get("Key") == key}
    if hashlib.md5(body, usedforsecurity=False).hexdigest() not in etags:
        await s3.put_object(bucket, key, body)
    return f"s3://{bucket}/{LIFECYCLE_PREFIX}"


async def delete_identity(iam: IamPort, cluster: str, region: str | None) -> list[str]:
    """Delete the cluster's roles (tagged with its name) and any OIDC provider an earlier
    podplane made for it; returns what went. The bucket stays: it holds users' data."""
    names = set(legacy_role_names(cluster).values())
    if region:
        names |= set(role_names(cluster, region).values())
    gone = [role for role in sorted(names) if await _delete_role(iam, cluster, role)]
    return gone + await _delete_oidc_providers(iam, cluster)


def _ours(tags: list[dict[str, str]], cluster: str) -> bool:
    found = {t["Key"]: t["Value"] for t in tags}
    return found.get(CLUSTER_TAG) == cluster and found.get(MANAGED_TAG) == "true"


async def _delete_role(iam: IamPort, cluster: str, role: str) -> bool:
    found = await iam.get_role(role)
    if found is None or not _ours(found.get("Tags", []), cluster):
        return False
    for p in await iam.list_attached_role_policies(role):
        await iam.detach_role_policy(role, p["PolicyArn"])
    for policy in await iam.list_role_policies(role):
        await iam.delete_role_policy(role, policy)
    await iam.delete_role(role)
    return True


async def _delete_oidc_providers(iam: IamPort, cluster: str) -> list[str]:
    """Older podplane versions registered the EKS OIDC issuer; Pod Identity needs none."""
    gone = []
    for provider in await iam.list_open_id_connect_providers():
        arn = provider["Arn"]
        found = await iam.get_open_id_connect_provider(arn)
        if found is not None and _ours(found.get("Tags", []), cluster):
            await iam.delete_open_id_connect_provider(arn)
            gone.append(arn)
    return gone
