"""The HyperPod step: one cluster with the first accelerated group, resilience on by default.

NodeRecovery is Automatic, on-start deep health checks run unless the user turned them off,
and nodes are provisioned continuously. HyperPod has no client token: the cluster's name is
deterministic, so the step describes before it creates. A Failed cluster (capacity, scripts)
is deleted before a retried step creates it again. With continuous provisioning a group HyperPod
cannot fill shows up only in the cluster's events (ListClusterEvents): its newest event is an
ERROR, which fails the step with the capacity hint; a retry after capacity returns only waits.
Every wait has a deadline (the docs' durations, with room), so no create polls forever.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from podplane.cloud.ports_aws import HyperPodPort
from podplane.domain.clusters import ClusterSpec, plan_cluster
from podplane.domain.errors import CloudError
from podplane.domain.hyperpod_failures import cluster_failure, group_event_failure
from podplane.domain.instance_groups import GroupPlacement, instance_group_request
from podplane.ops.context import StepContext
from podplane.ops.mutate import IN_FLIGHT, mutate_once
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.ec2_waits import wait_until
from podplane.services.clusters.network import CLUSTER_TAG, MANAGED_TAG
from podplane.services.iam_retry import while_iam_propagates

POLL = 60.0
# HyperPod takes 10-15 minutes; on-start deep health checks add 60-90 (AWS docs, about 2 hours
# in the resiliency tips): twice that, then the step fails and can be retried.
WAIT_SECONDS = {False: 45 * 60.0, True: 4 * 3600.0}


def create_request(spec: ClusterSpec, facts: dict[str, Any]) -> dict[str, Any]:
    """The CreateCluster request, derived from the decisions and the earlier steps' facts."""
    net = facts["network"]
    group = plan_cluster(spec, [spec.availability_zone, "-"], "0").group
    ig = instance_group_request(group, GroupPlacement(
        {"SourceS3Uri": facts["lifecycle_uri"], "OnCreate": "on_create.sh"},
        facts["hyperpod_role"], net["compute_subnet"], [net["security_group"]]))
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
            done=lambda _c: True)  # the wait below has the deadline and the event checks
    if ctx.phase_name != "polling" or "wait_started" not in ctx.checkpoint:
        await ctx.phase("polling", wait_started=ctx.clock.now().isoformat())
    last = ""
    while True:  # InService is not enough: the step ends when the groups' nodes are up
        failure = cluster_failure(current) or await shortfall_of(hp, current)
        if failure is not None:
            raise failure
        if current["ClusterStatus"] == "InService" and filled(current):
            return current
        check_deadline(ctx, current)
        if current["ClusterStatus"] == "InService" and counts(current) != last:
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


async def shortfall_of(hp: HyperPodPort, cluster: dict[str, Any]) -> CloudError | None:
    """Continuous provisioning keeps a cluster going with what it got and reports what it
    cannot provision only as cluster events (botocore: ListClusterEvents is "only supported
    when the NodeProvisioningMode is set to Continuous"). A group still short whose newest
    event is an ERROR is a failure the user should see, not a wait without end."""
    if cluster.get("NodeProvisioningMode") != "Continuous" or \
            cluster.get("ClusterStatus") not in ("Creating", "InService", "Updating"):
        return None
    for group in cluster.get("InstanceGroups", []):
        if group.get("CurrentCount", 0) >= group.get("TargetCount", 0):
            continue
        name = str(group["InstanceGroupName"])
        failure = group_event_failure(await hp.latest_group_event(cluster["ClusterName"], name))
        if failure is not None:
            return failure
    return None


def check_deadline(ctx: StepContext, cluster: dict[str, Any]) -> None:
    """Fail (retryably) once the wait has lasted longer than HyperPod ever should."""
    deep = any(g.get("OnStartDeepHealthChecks") for g in cluster.get("InstanceGroups", []))
    started = datetime.fromisoformat(str(ctx.checkpoint["wait_started"]))
    waited = (ctx.clock.now() - started).total_seconds()
    if waited > WAIT_SECONDS[deep]:
        raise CloudError(
            f"The HyperPod cluster {cluster['ClusterName']} is still "
            f"{cluster.get('ClusterStatus')} with {counts(cluster)} after "
            f"{int(waited // 60)} minutes.", code="hyperpod_timeout", retryable=True,
            hint="Look at the cluster's events and nodes in the SageMaker console (or `aws "
            "sagemaker list-cluster-events`); retry the step to keep waiting.")


async def _delete_failed(ctx: StepContext, cloud: Cloud, name: str) -> None:
    """A Failed cluster keeps its name: delete it, wait until it is gone, then create again."""
    await ctx.phase("deleting_failed")
    await cloud.aws.hyperpod.delete_cluster(name)

    async def gone() -> bool:
        return await cloud.aws.hyperpod.describe_cluster(name) is None

    await wait_until(ctx, f"the failed HyperPod cluster {name} to be deleted", gone,
                     timeout=3600, every=POLL, code="delete_timed_out")
    await ctx.note("the failed cluster was deleted; creating it again")
