"""What the AWS side of the sandbox shares with the Kubernetes side, in process.

The HyperPod emulator owns instances; the Kubernetes node controller turns them into
Node objects. Faults and recoveries on the AWS side show up as node labels and taints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class SandboxNode:
    cluster_name: str          # HyperPod cluster name
    eks_cluster_name: str      # the EKS cluster it is orchestrated by
    group_name: str            # instance group name
    instance_id: str           # i-...
    instance_type: str         # ml.p5.48xlarge
    availability_zone: str     # us-west-2a
    status: str                # Pending | Running | ShuttingDown | SystemUpdating | Failure ...
    capacity_type: str = "on-demand"  # on-demand | spot | training-plan
    health: str = "Schedulable"       # HyperPod node-health-status label value
    fault_reason: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    cluster_id: str = ""               # HyperPod cluster id (last part of the cluster ARN)
    availability_zone_id: str = ""     # usw2-az2: real providerIDs carry the AZ id
    efa_link_factor: float = 1.0       # an `efa_degraded` fault: the share of line rate left


class NodeSource(Protocol):
    """Implemented by the HyperPod emulator; read by the Kubernetes node controller."""

    def sandbox_nodes(self, eks_cluster_name: str | None = None) -> list[SandboxNode]: ...


# The sandbox's default credentials (written to its env file) belong to this IAM user.
SANDBOX_KEY = "test"
SANDBOX_SECRET = "test"
SANDBOX_ADMIN_ARN = "arn:aws:iam::123456789012:user/sandbox-admin"


@dataclass(frozen=True)
class Signer:
    """The principal behind an access key, as STS GetCallerIdentity names it."""

    arn: str            # arn:aws:iam::<acct>:user/<name> or arn:aws:sts::...:assumed-role/...
    principal_arn: str  # what EKS matches access entries against (a session -> its role ARN)
    secret: str         # the secret key that signs for this access key


@dataclass(frozen=True)
class AccessGrant:
    """An EKS access entry as the Kubernetes API server's authorizer sees it."""

    username: str
    entry_type: str = "STANDARD"  # STANDARD | EC2_LINUX | HYPERPOD_LINUX | ...
    # (policy name, scope type "cluster" | "namespace", namespaces)
    policies: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    groups: tuple[str, ...] = ()


class AccessSource(Protocol):
    """Implemented by the AWS side (IAM keys, EKS access entries); read by the Kubernetes API."""

    def signer(self, access_key: str) -> Signer | None: ...

    def grant(self, eks_cluster_name: str, principal_arn: str) -> AccessGrant | None: ...


@dataclass(frozen=True)
class SandboxAddon:
    eks_cluster_name: str      # the EKS cluster the add-on belongs to
    name: str                  # EKS add-on name: coredns, cert-manager, ...
    version: str               # v1.12.1-eksbuild.2
    status: str                # CREATING | ACTIVE | DEGRADED | ...


class AddonSource(Protocol):
    """Implemented by the EKS emulator; read by the Kubernetes side, keyed by EKS cluster name
    (None: every cluster, for a single shared API server). What an add-on installs becomes
    objects in that cluster's store; Pod Identity associations drive pod admission."""

    def sandbox_addons(self, eks_cluster_name: str | None = None) -> list[SandboxAddon]: ...

    def pod_identity_role(self, eks_cluster_name: str | None, namespace: str,
                          service_account: str) -> str | None: ...


class NetworkView(Protocol):
    """The AWS side's answer to the Kubernetes side's network questions about a Node (a Node
    object as a dict): kubelet's error text when the node's subnet has no way there, or None.
    Optional: a node source without these methods means an unconstrained network."""

    def pull_blocked(self, node: dict[str, Any], image: str) -> str | None: ...

    def s3_blocked(self, node: dict[str, Any]) -> str | None: ...


class BucketSource(Protocol):
    """S3 as the Kubernetes side sees it through a Mountpoint volume."""

    def s3_object(self, bucket: str, key: str) -> bytes | None: ...

    def put_s3_object(self, bucket: str, key: str, data: bytes, role_arn: str) -> str | None:
        """The error text when the write is refused, else None."""
        ...
