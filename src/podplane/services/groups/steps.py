"""Step building blocks shared by instance-group and node workflows: one UpdateCluster exactly
once, and polls of the source of truth (DescribeCluster, ListClusterNodes, Kubernetes Nodes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podplane.domain.errors import CloudError
from podplane.domain.hyperpod_failures import group_failure
from podplane.domain.instance_groups import for_update
from podplane.domain.node_identity import instance_id_of
from podplane.ops.context import StepContext
from podplane.ops.mutate import mutate_once
from podplane.services import scope
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.hyperpod import check_deadline, shortfall_of
from podplane.services.groups import cloud as gc

Shape = dict[str, Any]
POLL_SECONDS = 30.0
IN_SERVICE_DEADLINE = 3600.0  # an update or a software patch takes minutes, not hours
KUBE_POLL_SECONDS = 10.0
KUBE_MAX_POLLS = 90          # 15 minutes for Nodes to register after instances run
GROUP_LABEL = "sagemaker.amazonaws.com/instance-group-name"
CLUSTER_LABEL = "sagemaker.amazonaws.com/cluster-name"
HEALTH_LABEL = "sagemaker.amazonaws.com/node-health-status"


def update_params(described: Shape, ref: scope.ClusterRef, *,
                  changes: dict[str, Shape] | None = None, add: list[Shape] | None = None,
                  delete: list[str] | None = None) -> Shape:
    """An UpdateCluster request: every remaining group with allowlisted fields only (so the
    groups we do not touch are resubmitted exactly as they are), plus additions/deletions."""
    changes, delete = changes or {}, delete or []
    groups = [for_update(g, **changes.get(g["InstanceGroupName"], {}))
              for g in scope.groups_of(described)
              if g["InstanceGroupName"] not in delete and g.get("Status") != "Deleting"]
    groups += add or []
    params: Shape = {"ClusterName": ref.hyperpod}
    if groups:
        params["InstanceGroups"] = groups
    if delete:
        params["InstanceGroupsToDelete"] = list(delete)
    return params


async def wait_in_service(ctx: StepContext, cloud: Cloud, ref: scope.ClusterRef) -> Shape:
    """UpdateCluster is only accepted while the cluster is InService: wait for it."""
    waited, waited_for = False, 0.0
    while True:
        described = await scope.describe(cloud.aws.hyperpod, ref)
        status = described.get("ClusterStatus")
        if status == "InService":
            return described
        if status in ("Failed", "Deleting", "RollingBack"):
            raise CloudError(f"The HyperPod cluster {ref.hyperpod} is {status}.",
                             code="cluster_not_in_service", retryable=False,
                             hint="Instance groups can change only while the cluster is "
                             "InService.")
        if not waited:
            await ctx.note(f"waiting for the cluster to be InService (now {status})")
            waited = True
        waited_for += POLL_SECONDS
        if waited_for > IN_SERVICE_DEADLINE:
            raise CloudError(f"The HyperPod cluster {ref.hyperpod} is still {status} after "
                             f"{waited_for:.0f} s.", code="wait_timed_out", retryable=False,
                             hint="Look at the cluster's events in the SageMaker console; "
                                  "retry this step to wait again.")
        await ctx.sleep(POLL_SECONDS)


async def update_once(ctx: StepContext, cloud: Cloud, ref: scope.ClusterRef,
                      build: Callable[[Shape], Shape], landed: Callable[[Shape], bool]) -> Shape:
    """Send one UpdateCluster (built from fresh state) unless `landed` says it already did."""
    hp = cloud.aws.hyperpod

    async def submit() -> Shape:
        described = await wait_in_service(ctx, cloud, ref)
        params = build(described)
        await hp.update_cluster(params)
        return {"groups_sent": [g["InstanceGroupName"] for g in params.get("InstanceGroups", [])],
                "groups_deleted": params.get("InstanceGroupsToDelete", [])}

    async def inspect() -> Shape | None:
        described = await scope.describe(hp, ref)
        return described if landed(described) else None

    return await mutate_once(ctx, token=ctx.client_token(), submit=submit, inspect=inspect,
                             done=lambda _: True, poll_every=POLL_SECONDS)


async def wait_group(ctx: StepContext, cloud: Cloud, ref: scope.ClusterRef, name: str,
                     count: int) -> Shape:
    """Poll until the group's target is reached: CurrentCount == TargetCount == count and
    every node of the group Running (or the group gone when count is -1). A group HyperPod
    cannot fill fails the step: Degraded/Failed, or (continuous provisioning) an ERROR as its
    newest cluster event; so does a wait longer than HyperPod ever takes."""
    if "wait_started" not in ctx.checkpoint:
        await ctx.phase("waiting", wait_started=ctx.clock.now().isoformat())
    last = ""
    while True:
        described = await scope.describe(cloud.aws.hyperpod, ref)
        group = scope.find_group(described, name)
        nodes = await gc.group_nodes(cloud.aws.hyperpod, ref, name)
        err = group_failure(described, group) or await shortfall_of(
            cloud.aws.hyperpod, {**described, "InstanceGroups": [group] if group else []})
        if err is not None:
            raise err
        check_deadline(ctx, described)
        running = [n for n in nodes if n["InstanceStatus"]["Status"] == "Running"]
        if count < 0:
            done = group is None and not nodes
            now = f"deleting: {len(nodes)} node(s) left"
        else:
            done = (group is not None and group.get("TargetCount") == count
                    and group.get("CurrentCount") == count
                    and len(running) == len(nodes) == count)
            now = f"{len(running)}/{count} node(s) running"
        if now != last:
            await ctx.note(now, running=len(running), nodes=len(nodes))
            last = now
        if done:
            return {"instance_ids": sorted(n["InstanceId"] for n in running)}
        await ctx.sleep(POLL_SECONDS)


async def wait_kube_nodes(ctx: StepContext, cloud: Cloud, ref: scope.ClusterRef,
                          labels: dict[str, str], ready: set[str],
                          gone: set[str] | None = None, exact: bool = False) -> Shape:
    """Poll Kubernetes until the Nodes of `ready` instances are Ready and Schedulable and the
    Nodes of `gone` instances have left (with `exact`, every other Node too)."""
    kube = await cloud.kube_for(ref.eks)
    gone = gone or set()
    for _ in range(KUBE_MAX_POLLS):
        nodes = await kube.list("v1", "Node", labels=labels)
        by_id = {instance_id(n): n for n in nodes}
        ok = {i for i in ready if i in by_id and node_ready(by_id[i])}
        extra = set(by_id) - ready if exact else gone & set(by_id)
        if ok == ready and not extra:
            return {"kubernetes_nodes": sorted(n["metadata"]["name"] for n in nodes)}
        await ctx.sleep(KUBE_POLL_SECONDS)
    raise CloudError("Kubernetes Nodes did not become Ready in time.", code="nodes_not_ready",
                     retryable=False, hint="Check the nodes with `kubectl get nodes` and the "
                     "lifecycle-script logs; then retry this step.")


def instance_id(node: Shape) -> str:
    """The Node's EC2 instance id ("" when neither providerID nor name carries one)."""
    provider = str(node.get("spec", {}).get("providerID", ""))
    return instance_id_of(provider, str(node["metadata"].get("name", ""))) or ""


def node_ready(node: Shape) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    labels = node["metadata"].get("labels") or {}
    return ready and labels.get(HEALTH_LABEL, "Schedulable") == "Schedulable"

