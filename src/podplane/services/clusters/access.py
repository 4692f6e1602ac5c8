"""podplane's own way into an EKS cluster's Kubernetes API: an access entry for its principal.

EKS lets an IAM principal into Kubernetes only through an access entry (the creator gets one
with bootstrapClusterCreatorAdminPermissions). A cluster podplane did not create, or podplane
running under another role, has none and gets 401; so podplane creates the entry with
AmazonEKSClusterAdminPolicy at cluster scope, or says exactly what an administrator must run.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.aws_identity import (
    CLUSTER_ADMIN_POLICY,
    access_entry_commands,
    principal_arn,
)
from podplane.domain.errors import CloudError
from podplane.services.cloud_access import Cloud


async def own_principal(cloud: Cloud) -> str:
    who = await cloud.aws.sts.caller_identity()
    return principal_arn(str(who["Arn"]))


async def ensure_access_entry(cloud: Cloud, eks_name: str) -> dict[str, Any]:
    """Make sure podplane's principal has an access entry on `eks_name`; returns what it did."""
    principal = await own_principal(cloud)
    try:
        entries = await cloud.aws.eks.list_access_entries(eks_name)
        if principal in entries:
            return {"principal": principal, "access_entry": "present"}
        await cloud.aws.eks.create_access_entry(eks_name, principal)
        await cloud.aws.eks.associate_access_policy(eks_name, principal, CLUSTER_ADMIN_POLICY,
                                                    {"type": "cluster"})
    except CloudError as err:
        if _config_map_mode(err):  # no access entries: only the creator and aws-auth get in
            return {"principal": principal, "access_entry": "none (CONFIG_MAP mode)"}
        raise no_access(eks_name, principal, err) from err
    await cloud.kube.forget(eks_name)  # a client made before the entry may hold a 401
    return {"principal": principal, "access_entry": "created"}


def _config_map_mode(err: CloudError) -> bool:
    return err.code == "cloud_invalid" and "authentication mode" in err.message


def no_access(eks_name: str, principal: str, err: CloudError) -> CloudError:
    hint = (f"podplane ({principal}) may not manage access entries here "
            f"(eks:ListAccessEntries, eks:CreateAccessEntry, eks:AssociateAccessPolicy). "
            f"Grant those, or have an administrator run: "
            f"{access_entry_commands(eks_name, principal)}")
    return CloudError(f"podplane has no Kubernetes access to EKS cluster {eks_name!r} and "
                      f"could not create it: {err.message}", code="kube_access_missing",
                      hint=hint, principal=principal)


def unauthorized(eks_name: str, principal: str, err: CloudError) -> CloudError:
    """A 401 from the cluster's Kubernetes API, with the commands that fix it."""
    return CloudError(f"EKS cluster {eks_name!r} does not let {principal} into Kubernetes "
                      f"({err.message}).", code="kube_unauthorized",
                      hint=f"Create an access entry for {principal}: "
                           f"{access_entry_commands(eks_name, principal)}",
                      principal=principal)
