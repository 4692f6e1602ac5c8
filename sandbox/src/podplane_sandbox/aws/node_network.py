"""HyperPod bootstrap needs the network (issue 19): an instance fetches its lifecycle script
from S3 and joins its EKS cluster. If its subnet cannot reach either, the lifecycle script fails
and HyperPod reports it as it does on AWS (real-aws-behaviour.md, "Failure messages users see";
AWS HyperPod troubleshooting docs):

- during CreateCluster: the cluster rolls back and ends `Failed` with the lifecycle message;
- later (scale-up, replacement): the instance fails and is replaced, and the replacement is
  judged again, so a route fixed in the meantime lets it join.

Called from `hyperpod/nodes.py` where an instance launches.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.reachability import can_reach
from podplane_sandbox.aws.world import World

LIFECYCLE_FAILURE = (
    "Lifecycle scripts did not run successfully. Ensure the scripts exist in provided S3 path, "
    "are accessible, and run without errors. Please see CloudWatch logs for more details.")
SCRIPT_FAIL_SECONDS = 420.0  # the failure shows once the scripts ran (hyperpod/clusters.py)


def check_bootstrap(world: World, cluster: dict[str, Any], group: dict[str, Any],
                    node: dict[str, Any]) -> None:
    why = bootstrap_blocker(world, cluster, group, node["_az"])
    if why is None:
        return
    at = float(node["LaunchTime"]) + SCRIPT_FAIL_SECONDS
    message = (f"Instance {node['InstanceId']} failed to provision with the following error: "
               f"{LIFECYCLE_FAILURE}")
    if cluster["ClusterStatus"] == "Creating":
        if not cluster.get("_fail_at"):
            cluster["_fail_at"], cluster["_fail_msg"] = at, LIFECYCLE_FAILURE
        node["Message"] = message
    else:  # the instance is terminated and replaced; the replacement is judged again
        node.update(Status="ShuttingDown", Message=message, _until=at, _replace=True)
    _event(world, cluster, group, node["InstanceId"], message, at)
    world.record("sagemaker", "InstanceBootstrapFailed", node["InstanceId"],
                 cluster=cluster["ClusterName"], reason=why)


def bootstrap_blocker(world: World, cluster: dict[str, Any], group: dict[str, Any],
                      az: str) -> str | None:
    """Why an instance of `group` in `az` cannot bootstrap, or None when it can."""
    where = instance_network(world, cluster, group, az)
    if where is None:
        return None
    subnet, groups, eks = where
    for target in ("s3", "eks") if eks else ("s3",):
        ok, why = can_reach(world, subnet, target, security_groups=groups, eks_cluster=eks)
        if not ok:
            return f"{target}: {why}"
    return None


def instance_network(world: World, cluster: dict[str, Any], group: dict[str, Any],
                     az: str) -> tuple[str, list[str], str | None] | None:
    """(subnet, security groups, EKS cluster name) of a HyperPod instance in `az`, the way
    HyperPod places it (the group's OverrideVpcConfig, else the cluster's VpcConfig)."""
    vpc = group.get("OverrideVpcConfig") or cluster.get("VpcConfig") or {}
    subnets = list(vpc.get("Subnets", []))
    here = [s for s in subnets if world.subnet_azs and world.subnet_azs(s) == az]
    if not (here or subnets):
        return None
    eks_arn = ((cluster.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn", "")
    return ((here or subnets)[0], list(vpc.get("SecurityGroupIds", [])),
            eks_arn.rsplit("/", 1)[-1] or None)


def _event(world: World, cluster: dict[str, Any], group: dict[str, Any], iid: str,
           message: str, at: float) -> None:
    """An Error event for ListClusterEvents, in the HyperPod emulator's events table (which
    serves them, for continuous-provisioning clusters only, as botocore documents)."""
    if cluster.get("NodeProvisioningMode") != "Continuous":
        return
    events = world.service_state("sagemaker").setdefault("events", {}).setdefault(
        cluster["ClusterName"], [])
    events.append({"_seq": len(events), "EventId": f"{iid}-bootstrap-{len(events)}",
                   "ClusterArn": cluster["ClusterArn"], "ClusterName": cluster["ClusterName"],
                   "InstanceGroupName": group["InstanceGroupName"], "InstanceId": iid,
                   "ResourceType": "Instance", "EventTime": at, "EventLevel": "Error",
                   "Description": message})
