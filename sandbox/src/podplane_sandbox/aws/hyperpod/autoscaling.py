"""HyperPod-managed autoscaling on UpdateCluster (botocore sagemaker 2017-07-24:
UpdateClusterRequest.AutoScaling {Mode, AutoScalerType}, ClusterRole; DescribeCluster's
ClusterAutoScalingConfigOutput {Mode, AutoScalerType, Status}).

Rules from the API reference and the SageMaker autoscaling docs: enabling needs the cluster
role HyperPod assumes (ClusterRole, sent now or earlier), continuous node provisioning and
automatic node recovery; ClusterRole cannot change while autoscaling is enabled.

The ClusterRole is HyperPod's to assume: SageMaker docs "Create an IAM role for HyperPod
autoscaling with Karpenter" (sagemaker-hyperpod-eks-autoscaling-iam) give its trust policy,
principal `hyperpod.sagemaker.amazonaws.com` with `sts:AssumeRole`, and its permissions,
`sagemaker:BatchAddClusterNodes` and `sagemaker:BatchDeleteClusterNodes` on the account's
clusters (plus KMS grants for encrypted volumes, not modelled). A role HyperPod cannot assume is
refused when autoscaling is enabled with it (as UpdateCluster refuses an ExecutionRole it cannot
assume, iam_rules.check_execution_roles; the sources are silent on the wording); a role that may
not add or delete this cluster's nodes leaves Karpenter unable to scale (karpenter.py).
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws import iam_rules
from podplane_sandbox.aws.errors import sm_validation

HYPERPOD_PRINCIPAL = "hyperpod.sagemaker.amazonaws.com"
UPDATED = ("NodeRecovery", "TieredStorageConfig", "NodeProvisioningMode", "ClusterRole")


def check_autoscaling(w: Any, cluster: dict[str, Any], p: dict[str, Any]) -> None:
    """UpdateCluster's AutoScaling, refused before anything changes; `p`'s own
    NodeProvisioningMode, NodeRecovery and ClusterRole count as sent with it."""
    want = p["AutoScaling"]
    mode = want.get("Mode")
    if mode not in ("Enable", "Disable"):
        raise sm_validation("AutoScaling.Mode must be Enable or Disable.")
    if want.get("AutoScalerType", "Karpenter") != "Karpenter":
        raise sm_validation("AutoScaling.AutoScalerType must be Karpenter.")
    if mode != "Enable":
        return
    after = {**cluster, **{k: p[k] for k in UPDATED if k in p}}
    if not after.get("ClusterRole"):
        raise sm_validation("Autoscaling needs a ClusterRole for HyperPod to assume.")
    if after.get("NodeProvisioningMode") != "Continuous":
        raise sm_validation("Autoscaling needs NodeProvisioningMode Continuous.")
    if after.get("NodeRecovery") != "Automatic":
        raise sm_validation("Autoscaling needs NodeRecovery Automatic.")
    iam_rules.check_assumable(w, after["ClusterRole"], HYPERPOD_PRINCIPAL)


def autoscaling_update(cluster: dict[str, Any], p: dict[str, Any]) -> None:
    cluster["AutoScaling"] = {"Mode": p["AutoScaling"]["Mode"], "AutoScalerType": "Karpenter",
                              "Status": "InService"}


def check_cluster_role(cluster: dict[str, Any], p: dict[str, Any]) -> None:
    on = (cluster.get("AutoScaling") or {}).get("Mode") == "Enable"
    if on and "ClusterRole" in p and p["ClusterRole"] != cluster.get("ClusterRole"):
        raise sm_validation("ClusterRole cannot be updated while autoscaling is enabled.")


# What HyperPod's managed Karpenter does on the service side (SageMaker docs "Autoscaling on
# HyperPod EKS"; ../shared/crds/karpenter/HYPERPOD_NODECLASS.md): it adds nodes to, and
# removes nodes from, the instance groups a HyperpodNodeClass names, through the cluster API
# (botocore sagemaker BatchAddClusterNodes {NodesToAdd: [{InstanceGroupName,
# IncrementTargetCountBy}]} and BatchDeleteClusterNodes {NodeIds}), as the ClusterRole.


def autoscaled(hp: Any, eks_name: str | None) -> dict[str, dict[str, Any]] | None:
    """The instance groups Karpenter may scale on the HyperPod cluster of `eks_name`
    (None when autoscaling is off or the cluster is not InService)."""
    with hp.w.lock:
        for cluster in hp.table("clusters").values():
            arn = cluster.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn", "")
            if eks_name and arn.rsplit("/", 1)[-1] != eks_name:
                continue
            scaling = cluster.get("AutoScaling") or {}
            if scaling.get("Mode") != "Enable" or cluster["ClusterStatus"] != "InService":
                return None
            return {g["InstanceGroupName"]: {"instance_type": g["InstanceType"],
                                             "target": g["TargetCount"],
                                             "cluster": cluster["ClusterName"],
                                             "deep_health_checks": list(
                                                 g.get("OnStartDeepHealthChecks") or [])}
                    for g in cluster["InstanceGroups"] if g.get("Status") != "Deleting"}
    return None


def denied(cluster: dict[str, Any], action: str) -> str | None:
    """Why the cluster's ClusterRole may not call `action` on the cluster (None: it may)."""
    role = cluster.get("ClusterRole") or ""
    if iam_rules.role_allows(role, f"sagemaker:{action}", cluster["ClusterArn"]):
        return None
    return (f"AccessDeniedException: {role} is not authorized to perform: sagemaker:{action} "
            f"on resource: {cluster['ClusterArn']}")


def add_nodes(hp: Any, cluster_name: str, group_name: str, count: int) -> str | None:
    """Karpenter's launch through HyperPod as the ClusterRole; the refusal when it may not."""
    with hp.w.lock:
        cluster = hp.get_cluster(cluster_name)
        if (refused := denied(cluster, "BatchAddClusterNodes")) is not None:
            return refused
        group = hp.group(cluster, group_name)
        group["TargetCount"] += count
        hp._launch_groups(cluster, [group], fail_cluster=False)
        hp.w.record("sagemaker", "BatchAddClusterNodes", cluster_name, group=group_name,
                    increment=count, by="karpenter")
        return None


def remove_nodes(hp: Any, cluster_name: str, group_name: str,
                 instance_ids: list[str]) -> str | None:
    from podplane_sandbox.aws.hyperpod.nodes import SHUTDOWN_SECONDS

    with hp.w.lock:
        cluster = hp.get_cluster(cluster_name)
        if (refused := denied(cluster, "BatchDeleteClusterNodes")) is not None:
            return refused
        group = hp.group(cluster, group_name)
        nodes = hp.nodes(cluster_name)
        now = hp.w.now()
        gone = [i for i in instance_ids if i in nodes and nodes[i]["Status"] != "ShuttingDown"]
        for iid in gone:
            nodes[iid].update(Status="ShuttingDown", _until=now + SHUTDOWN_SECONDS,
                              _replace=False)
        group["TargetCount"] = max(0, group["TargetCount"] - len(gone))
        hp.w.record("sagemaker", "BatchDeleteClusterNodes", cluster_name, group=group_name,
                    node_ids=gone, by="karpenter")
        return None
