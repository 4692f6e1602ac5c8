"""What the AWS side of the sandbox shares with the Kubernetes side, in process.

The HyperPod emulator owns instances; the Kubernetes node controller turns them into
Node objects. Faults and recoveries on the AWS side show up as node labels and taints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


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


class NodeSource(Protocol):
    """Implemented by the HyperPod emulator; read by the Kubernetes node controller."""

    def sandbox_nodes(self, eks_cluster_name: str | None = None) -> list[SandboxNode]: ...
