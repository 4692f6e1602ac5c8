"""IAM roles for add-ons' Pod Identity associations, passed to EKS at CreateAddon.

EKS Pod Identity roles trust `pods.eks.amazonaws.com` with sts:AssumeRole and sts:TagSession
(EKS docs "Create an IAM role for EKS Pod Identity"). The association must exist before the
add-on's pods are admitted, since the webhook injects credentials only at admission, so it is
given in CreateAddon's `podIdentityAssociations` rather than created afterwards.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.dependencies import PodIdentity
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.identity import bucket_policy, ensure_role, role_names

POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"


def addon_role_name(cluster: str, key: str, region: str) -> str:
    """The cluster's role for `key`, named (and hashed) like the cluster's other roles."""
    return role_names(cluster, region)[key]


async def ensure_addon_role(cloud: Cloud, cluster: str, identity: PodIdentity,
                            bucket: str | None) -> str:
    """The role, with the add-on's managed policies; the CSI driver's is scoped to the bucket."""
    region = cloud.aws.region
    inline = bucket_policy(bucket, region) if identity.role == "s3csi" and bucket else None
    return await ensure_role(cloud.aws.iam, cluster,
                             addon_role_name(cluster, identity.role, region),
                             POD_IDENTITY_SERVICE, identity.managed_policies, inline=inline)


async def associations_to_pass(cloud: Cloud, cluster: str, identity: PodIdentity | None,
                               bucket: str | None) -> list[dict[str, Any]]:
    """`podIdentityAssociations` for CreateAddon; empty when the service account already has
    an association (EKS refuses a second one for the same service account)."""
    if identity is None:
        return []
    existing = await cloud.aws.eks.list_pod_identity_associations(cluster)
    if any((a.get("namespace"), a.get("serviceAccount")) ==
           (identity.namespace, identity.service_account) for a in existing):
        return []
    role = await ensure_addon_role(cloud, cluster, identity, bucket)
    return [{"serviceAccount": identity.service_account, "roleArn": role}]
