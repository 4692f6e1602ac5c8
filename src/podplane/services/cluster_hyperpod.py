"""The HyperPod step: one cluster with the first accelerated group, resilience on by default.

NodeRecovery is Automatic, on-start deep health checks run unless the user turned them off,
and nodes are provisioned continuously. HyperPod has no client token: the cluster's name is
deterministic, so the step describes before it creates. A Failed cluster (capacity, scripts)
is deleted before a retried step creates it again; an InService cluster still short of capacity
fails the step with the capacity hint, and a retry after capacity returns only waits for it.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.errors import capacity_error
from podplane.cloud.aws.hyperpod import failure_of
from podplane.domain.clusters import ClusterSpec, plan_cluster
from podplane.domain.errors import CloudError
from podplane.domain.instance_groups import CapacityType
from podplane.ops.context import StepContext
from podplane.ops.mutate import IN_FLIGHT, mutate_once
from podplane.services.cloud_access import Cloud
from podplane.services.cluster_network import CLUSTER_TAG, MANAGED_TAG
from podplane.services.iam_retry import while_iam_propagates

POLL = 60.0
TERMINAL = ("InService", "Failed")


def create_request(spec: ClusterSpec, facts: dict[str, Any]) -> dict[str, Any]:
    """The CreateCluster request, derived from the decisions and the earlier steps' facts."""
    net = facts["network"]
    group = plan_cluster(spec, [spec.availability_zone, "-"], "0").group
    ig: dict[str, Any] = {
        "InstanceGroupName": group.name, "InstanceType": group.instance_type,
        "InstanceCount": group.count,
        "LifeCycleConfig": {"SourceS3Uri": facts["lifecycle_uri"], "OnCreate": "on_create.sh"},
        "ExecutionRole": facts["hyperpod_role"], "ThreadsPerCore": group.threads_per_core,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": group.ebs_gb}}],
        "OverrideVpcConfig": {"SecurityGroupIds": [net["security_group"]],
                              "Subnets": [net["compute_subnet"]]},
    }
    if group.deep_health_checks:
        ig["OnStartDeepHealthChecks"] = list(group.deep_health_checks)
    if group.training_plan_arn:
        ig["TrainingPlanArn"] = group.training_plan_arn
    if group.capacity_type is CapacityType.SPOT:
        ig["CapacityRequirements"] = {"Spot": {}}
    return {
        "ClusterName": spec.name, "InstanceGroups": [ig],
        "VpcConfig": {"SecurityGroupIds": [net["security_group"]],
                      "Subnets": [net["compute_subnet"]]},
        "Orchestrator": {"Eks": {"ClusterArn": facts["eks_arn"]}},
        "NodeRecovery": "Automatic", "NodeProvisioningMode": "Continuous",
        "Tags": [{"Key": CLUSTER_TAG, "Value": spec.name}, {"Key": MANAGED_TAG, "Value": "true"}],
    }


async def ensure(ctx: StepContext, cloud: Cloud, spec: ClusterSpec,
                 facts: dict[str, Any]) -> dict[str, Any]:
    hp = cloud.aws.hyperpod
    token = ctx.client_token()
    in_flight = ctx.phase_name in IN_FLIGHT and ctx.checkpoint.get("client_token") == token
    current = None if in_flight else await hp.describe_cluster(spec.name)
    if current is not None and current["ClusterStatus"] == "Failed":
        await _delete_failed(ctx, cloud, spec.name)
        current = None
    if current is None:
        request = create_request(spec, facts)
        current = await mutate_once(
            ctx, token=token, poll_every=POLL,
            submit=lambda: while_iam_propagates(ctx, facts["hyperpod_role"],
                                                lambda: hp.create_cluster(request)),
            inspect=lambda: hp.describe_cluster(spec.name),
            done=lambda c: c["ClusterStatus"] in TERMINAL)
    while current["ClusterStatus"] not in TERMINAL:
        if ctx.phase_name != "polling":
            await ctx.phase("polling")
        await ctx.sleep(POLL)
        current = await hp.describe_cluster(spec.name) or current
    last = ""
    while True:  # InService is not enough: the step ends when the groups' nodes are up
        failure = failure_of(current) or shortfall_of(current)
        if failure is not None:
            raise failure
        if filled(current):
            return current
        if counts(current) != last:
            last = counts(current)
            await ctx.note("waiting for nodes: " + last)
        await ctx.sleep(POLL)
        current = await hp.describe_cluster(spec.name) or current


def filled(cluster: dict[str, Any]) -> bool:
    return all(g.get("CurrentCount", 0) >= g.get("TargetCount", 0)
               for g in cluster.get("InstanceGroups", []))


def counts(cluster: dict[str, Any]) -> str:
    return ", ".join(f"{g['InstanceGroupName']} {g.get('CurrentCount', 0)}/"
                     f"{g.get('TargetCount', 0)}" for g in cluster.get("InstanceGroups", []))


def shortfall_of(cluster: dict[str, Any]) -> CloudError | None:
    """Continuous provisioning keeps a cluster InService with what it got; a group still short
    with a capacity message is a failure the user should see (and retry once capacity is back),
    not a wait without end."""
    message = str(cluster.get("FailureMessage") or "")
    short = [g for g in cluster.get("InstanceGroups", [])
             if g.get("CurrentCount", 0) < g.get("TargetCount", 0)]
    if cluster.get("ClusterStatus") != "InService" or not short or "capacity" not in message:
        return None
    return capacity_error(f"sagemaker.create_cluster: {message}", message)


async def _delete_failed(ctx: StepContext, cloud: Cloud, name: str) -> None:
    """A Failed cluster keeps its name: delete it, wait until it is gone, then create again."""
    await ctx.phase("deleting_failed")
    await cloud.aws.hyperpod.delete_cluster(name)
    while await cloud.aws.hyperpod.describe_cluster(name) is not None:
        await ctx.sleep(POLL)
    await ctx.note("the failed cluster was deleted; creating it again")
