"""Which HyperPod instance groups managed autoscaling (HyperPod-managed Karpenter) may scale,
as the SageMaker docs state it ("Create a NodeClass", sagemaker-hyperpod-eks-autoscaling-
nodeclass; ../shared/crds/karpenter/HYPERPOD_NODECLASS.md):

- only on-demand capacity: "Instance groups with Training plan or reserved capacity are not
  supported" (and Spot is another capacity type than on-demand);
- "Instance groups with DeepHealthChecks (DHC) are not supported", because a DHC takes around
  60-90 minutes and pods stay pending meanwhile, which can cause over-provisioning. A
  HyperpodNodeClass naming such a group is not Ready and is not used for scaling.

Pure: a group as DescribeCluster shows it (botocore sagemaker ClusterInstanceGroupDetails:
TrainingPlanArn, CapacityRequirements, OnStartDeepHealthChecks).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Refusal:
    message: str
    hint: str


def refusal(name: str, group: Mapping[str, Any]) -> Refusal | None:
    """Why Karpenter on HyperPod cannot scale the group `name` (None: it can)."""
    if group.get("TrainingPlanArn") or "Spot" in (group.get("CapacityRequirements") or {}):
        return Refusal(f"{name!r} is not on-demand; Karpenter on HyperPod scales on-demand "
                       "groups only.", "Choose an on-demand group.")
    checks = list(group.get("OnStartDeepHealthChecks") or [])
    if checks:
        return Refusal(
            f"{name!r} runs deep health checks ({', '.join(checks)}); HyperPod's managed "
            "Karpenter does not support groups with deep health checks (they take 60-90 "
            "minutes per node while pods wait, which over-provisions).",
            "Choose a group without deep health checks (groups of a cluster created with "
            "deep_health_checks off have none).")
    return None
