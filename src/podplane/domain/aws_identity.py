"""IAM principals as EKS matches them (pure).

STS GetCallerIdentity names a role session `arn:aws:sts::<acct>:assumed-role/<role>/<session>`;
EKS access entries are keyed by the role's IAM ARN `arn:aws:iam::<acct>:role/<role>`
(aws-iam-authenticator `pkg/arn` canonicalisation; EKS user guide, access entries). Role paths
are not in the session ARN, so a role with a path must be given explicitly.
"""

from __future__ import annotations

import re

_ASSUMED = re.compile(r"^arn:(aws[\w-]*):sts::(\d{12}):assumed-role/([^/]+)/[^/]+$")
CLUSTER_ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def principal_arn(caller_arn: str) -> str:
    """The IAM ARN an EKS access entry needs for a caller ARN (a session -> its role)."""
    m = _ASSUMED.match(caller_arn)
    return f"arn:{m.group(1)}:iam::{m.group(2)}:role/{m.group(3)}" if m else caller_arn


def access_entry_commands(cluster: str, principal: str) -> str:
    """The AWS CLI commands an administrator runs to let `principal` into `cluster`."""
    return (f"aws eks create-access-entry --cluster-name {cluster} --principal-arn {principal}"
            f" && aws eks associate-access-policy --cluster-name {cluster} --principal-arn "
            f"{principal} --policy-arn {CLUSTER_ADMIN_POLICY} --access-scope type=cluster")
