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
                                             "cluster": cluster["ClusterName"]}
                    for g in cluster["InstanceGroups"] if g.get("Status") != "Deleting"}
    return None


def add_nodes(hp: Any, cluster_name: str, group_name: str, count: int) -> None:
    with hp.w.lock:
        cluster = hp.get_cluster(cluster_name)
        group = hp.group(cluster, group_name)
        group["TargetCount"] += count
        hp._launch_groups(cluster, [group], fail_cluster=False)
        hp.w.record("sagemaker", "BatchAddClusterNodes", cluster_name, group=group_name,
                    increment=count, by="karpenter")


def remove_nodes(hp: Any, cluster_name: str, group_name: str, instance_ids: list[str]) -> None:
    from podplane_sandbox.aws.hyperpod.nodes import SHUTDOWN_SECONDS

    with hp.w.lock:
        cluster = hp.get_cluster(cluster_name)
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
