"""HyperPod-managed autoscaling on UpdateCluster (botocore sagemaker 2017-07-24:
UpdateClusterRequest.AutoScaling {Mode, AutoScalerType}, ClusterRole; DescribeCluster's
ClusterAutoScalingConfigOutput {Mode, AutoScalerType, Status}).

Rules from the API reference and the SageMaker autoscaling docs: enabling needs the cluster
role HyperPod assumes (ClusterRole, sent now or earlier), continuous node provisioning and
automatic node recovery; ClusterRole cannot change while autoscaling is enabled.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.errors import sm_validation


def autoscaling_update(cluster: dict[str, Any], p: dict[str, Any]) -> None:
    want = p["AutoScaling"]
    mode = want.get("Mode")
    if mode not in ("Enable", "Disable"):
        raise sm_validation("AutoScaling.Mode must be Enable or Disable.")
    if want.get("AutoScalerType", "Karpenter") != "Karpenter":
        raise sm_validation("AutoScaling.AutoScalerType must be Karpenter.")
    if mode == "Enable":
        if not (p.get("ClusterRole") or cluster.get("ClusterRole")):
            raise sm_validation("Autoscaling needs a ClusterRole for HyperPod to assume.")
        if cluster.get("NodeProvisioningMode") != "Continuous":
            raise sm_validation("Autoscaling needs NodeProvisioningMode Continuous.")
        if cluster.get("NodeRecovery") != "Automatic":
            raise sm_validation("Autoscaling needs NodeRecovery Automatic.")
    cluster["AutoScaling"] = {"Mode": mode, "AutoScalerType": "Karpenter",
                              "Status": "InService"}


def check_cluster_role(cluster: dict[str, Any], p: dict[str, Any]) -> None:
    on = (cluster.get("AutoScaling") or {}).get("Mode") == "Enable"
    if on and "ClusterRole" in p and p["ClusterRole"] != cluster.get("ClusterRole"):
        raise sm_validation("ClusterRole cannot be updated while autoscaling is enabled.")
