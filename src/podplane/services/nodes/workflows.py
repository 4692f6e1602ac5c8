"""Durable node actions: reboot, replace, delete — each one batch call exactly once, then polls
HyperPod until the node is back (or replaced, or gone) and Kubernetes agrees. Replace and
delete first cordon the Node and move its workload pods away."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from podplane.domain.errors import CloudError, NotFound
from podplane.ops.context import StepContext
from podplane.ops.mutate import mutate_once
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.ec2_waits import wait_until
from podplane.services.groups import steps

REBOOT, REPLACE, DELETE = "node.reboot", "node.replace", "node.delete"
POLL_SECONDS = 20.0
# HyperPod reboots take minutes (the sandbox: 3); past this the step fails, classified, rather
# than poll a node that never went down.
REBOOT_DEADLINE = 1800.0
# Replace / delete: a new instance, its lifecycle scripts and, on accelerated types with deep
# health checks on, those checks again before the node is Running (SageMaker docs, "Deep health
# checks": they run at creation, scale-up and replacement). The lag sandbox's g5 replacement
# takes 71 virtual minutes; one hour was too short.
ACTION_DEADLINE = 3 * 3600.0
Shape = dict[str, Any]


def declare(cloud: Cloud) -> list[Workflow]:
    s = NodeSteps(cloud)
    return [
        Workflow.of(REBOOT, ("reboot", s.reboot), ("kubernetes", s.kubernetes)),
        Workflow.of(REPLACE, ("drain", s.drain), ("replace", s.replace),
                    ("kubernetes", s.kubernetes)),
        Workflow.of(DELETE, ("drain", s.drain), ("delete", s.delete),
                    ("kubernetes", s.kubernetes)),
    ]


class NodeSteps:
    """The steps of the node workflows, each callable alone with a StepContext."""

    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud
        self.hp = cloud.aws.hyperpod

    async def drain(self, ctx: StepContext) -> Shape:
        return await drain_node(self.cloud, scope.ClusterRef.of(ctx.params), ctx.params["node"])

    async def reboot(self, ctx: StepContext) -> Shape:
        ref, node = scope.ClusterRef.of(ctx.params), ctx.params["node"]
        if "update_time" not in ctx.checkpoint:  # what the node showed before the reboot
            found = _by_id(await self._nodes_now(ref), node) or {}
            ctx.checkpoint["update_time"] = str(found.get("LastSoftwareUpdateTime") or "")
            ctx.checkpoint["ready_since"] = await self._ready_since(ref, node)

        async def inspect() -> Shape | None:
            found = _by_id(await self._nodes_now(ref), node)
            if found is None:
                raise CloudError(f"Node {node} disappeared during its reboot.",
                                 code="node_gone", retryable=False)
            if not ctx.checkpoint.get("seen_down") and await self._went_down(ctx, ref, found):
                await ctx.remember(seen_down=True)  # persisted: a restart must not forget it
            # Running and never seen down: the reboot has not been issued (or not begun). A
            # resumed step decides from the persisted observation, never from its phase alone.
            return found if ctx.checkpoint.get("seen_down") else None

        state = await self._batch(ctx, self.hp.reboot_nodes, inspect,
                                  lambda n: _status(n) == "Running", timeout=REBOOT_DEADLINE)
        return {"instance_id": state["InstanceId"]}

    async def _went_down(self, ctx: StepContext, ref: scope.ClusterRef, found: Shape) -> bool:
        """Down now, or down and back while we were not looking (a restart longer than the
        reboot): HyperPod's update time changed, or the kubelet's Ready condition moved (the
        Node's lastTransitionTime, Kubernetes NodeCondition; same clock as before)."""
        if _status(found) != "Running":
            return True
        if str(found.get("LastSoftwareUpdateTime") or "") != ctx.checkpoint.get("update_time"):
            return True
        before = ctx.checkpoint.get("ready_since")  # taken before the call was sent
        return before is not None and await self._ready_since(ref, found["InstanceId"]) != before

    async def _ready_since(self, ref: scope.ClusterRef, node: str) -> str | None:
        kube = await self.cloud.kube_for(ref.eks)
        for n in await kube.list("v1", "Node", labels={steps.CLUSTER_LABEL: ref.hyperpod}):
            if steps.instance_id(n) == node:
                ready = [c for c in (n.get("status") or {}).get("conditions") or []
                         if c.get("type") == "Ready"]
                return str(ready[0].get("lastTransitionTime")) if ready else None
        return None

    async def replace(self, ctx: StepContext) -> Shape:
        ref, node = scope.ClusterRef.of(ctx.params), ctx.params["node"]
        if "before" not in ctx.checkpoint:  # the group as it was, to recognise the new node
            everything = await self._nodes_now(ref)
            old_node = _by_id(everything, node) or {}
            group = old_node.get("InstanceGroupName")
            ctx.checkpoint.update(group=group, logical_id=old_node.get("NodeLogicalId"),
                                  before=sorted({n["InstanceId"] for n in everything
                                                 if n["InstanceGroupName"] == group} | {node}))
        group, logical = ctx.checkpoint["group"], ctx.checkpoint["logical_id"]
        before = set(ctx.checkpoint["before"])

        async def inspect() -> Shape | None:
            nodes = [n for n in await self._nodes_now(ref)
                     if n["InstanceGroupName"] == group]
            old = _by_id(nodes, node)
            if old is not None and _status(old) == "Running" and old.get("InstanceStatus", {}) \
                    .get("Message") != "Replacing":
                return None  # not replaced yet
            fresh = [n for n in nodes if n["InstanceId"] not in before]
            match = [n for n in fresh if n.get("NodeLogicalId") == logical] or fresh
            return {"old": old, "new": match[0] if match else None}

        state = await self._batch(ctx, self.hp.replace_nodes, inspect, _replaced,
                                  before=sorted(before), logical_id=logical, group=group)
        return {"replaced_instance_id": node, "new_instance_id": state["new"]["InstanceId"]}

    async def delete(self, ctx: StepContext) -> Shape:
        ref, node = scope.ClusterRef.of(ctx.params), ctx.params["node"]

        async def inspect() -> Shape | None:
            found = _by_id(await self._nodes_now(ref), node)
            return {"gone": True} if found is None or _status(found) == "ShuttingDown" else None

        await self._batch(ctx, self.hp.delete_nodes, inspect, lambda s: True)

        async def gone() -> bool:
            return _by_id(await self._nodes_now(ref), node) is None

        await wait_until(ctx, f"node {node} to be gone", gone, timeout=ACTION_DEADLINE,
                         every=POLL_SECONDS, code="wait_timed_out",
                         hint="Read the node with node_describe; retry this step to wait again.")
        return {"deleted_instance_id": node}

    async def kubernetes(self, ctx: StepContext) -> Shape:
        ref, node = scope.ClusterRef.of(ctx.params), ctx.params["node"]
        labels = {steps.CLUSTER_LABEL: ref.hyperpod}
        if ctx.kind == REBOOT:
            return await steps.wait_kube_nodes(ctx, self.cloud, ref, labels, {node})
        if ctx.kind == DELETE:
            return await steps.wait_kube_nodes(ctx, self.cloud, ref, labels, set(), {node})
        new = ctx.results["new_instance_id"]
        return await steps.wait_kube_nodes(ctx, self.cloud, ref, labels, {new}, {node})

    async def _nodes_now(self, ref: scope.ClusterRef) -> list[Shape]:
        return await self.hp.list_cluster_nodes(ref.hyperpod)

    async def _batch(self, ctx: StepContext, call: Callable[[str, list[str]], Awaitable[Shape]],
                     inspect: Callable[[], Awaitable[Shape | None]],
                     done: Callable[[Shape], bool], timeout: float = ACTION_DEADLINE,
                     **checkpoint: Any) -> Shape:
        """One batch call (reboot/replace/delete) for the node, exactly once, then poll."""
        ref, node = scope.ClusterRef.of(ctx.params), ctx.params["node"]

        async def submit() -> Shape:
            answer = await call(ref.hyperpod, [node])
            failed = answer.get("Failed") or []
            if failed:
                raise CloudError(f"{ctx.kind} of {node} was refused: "
                                 f"{failed[0].get('Message', failed[0])}",
                                 code="node_action_refused", retryable=False,
                                 hint="Read the node's status with node_describe; a node must "
                                 "be Running to reboot or replace it.")
            return {"successful": answer.get("Successful", [])}

        return await mutate_once(ctx, token=ctx.client_token(), submit=submit, inspect=inspect,
                                 done=done, poll_every=POLL_SECONDS, timeout=timeout,
                                 what=f"{ctx.kind} of {node}", **checkpoint)


async def drain_node(cloud: Cloud, ref: scope.ClusterRef, node: str) -> Shape:
    """Cordon the node's Kubernetes Node and move its workload pods away before the instance
    goes (DaemonSet pods stay: they die with the node). Safe to run again on resume."""
    kube = await cloud.kube_for(ref.eks)
    found = [n for n in await kube.list("v1", "Node", labels={steps.CLUSTER_LABEL: ref.hyperpod})
             if steps.instance_id(n) == node]
    if not found:
        return {"cordoned": None, "evicted": []}
    name = found[0]["metadata"]["name"]
    if not (found[0].get("spec") or {}).get("unschedulable"):
        await kube.patch("v1", "Node", name, {"spec": {"unschedulable": True}})
    evicted, unmanaged = [], []
    for pod in await kube.list("v1", "Pod", fields={"spec.nodeName": name}):
        meta = pod["metadata"]
        where = f"{meta.get('namespace')}/{meta['name']}"
        owners = {o.get("kind") for o in meta.get("ownerReferences") or []}
        if "DaemonSet" in owners or (pod.get("status") or {}).get("phase") in ("Succeeded",
                                                                             "Failed"):
            continue
        if not owners:  # nothing would recreate it: leave it, as kubectl drain does
            unmanaged.append(where)
            continue
        with contextlib.suppress(NotFound):  # already gone (a resumed step)
            await kube.delete("v1", "Pod", meta["name"], namespace=meta.get("namespace"))
        evicted.append(where)
    return {"cordoned": name, "evicted": evicted, "unmanaged_pods_left": unmanaged}


def _replaced(s: Shape) -> bool:
    return s["old"] is None and s["new"] is not None and _status(s["new"]) == "Running"


def _by_id(nodes: list[Shape], instance_id: str) -> Shape | None:
    return next((n for n in nodes if n.get("InstanceId") == instance_id), None)


def _status(node: Shape) -> str:
    return str((node.get("InstanceStatus") or {}).get("Status", ""))
