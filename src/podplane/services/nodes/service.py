"""Nodes of a managed cluster: list and describe with health joined from HyperPod and
Kubernetes; reboot, replace and delete as durable operations."""

from __future__ import annotations

import re
from typing import Any

from podplane.domain.effects import Effect
from podplane.domain.errors import (
    ConfirmationRequired,
    Conflict,
    InvalidInput,
    NotFound,
)
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.mutation import Outcome, key_used, start
from podplane.services.nodes import views
from podplane.services.nodes.workflows import DELETE, REBOOT, REPLACE
from podplane.services.observe import fleet
from podplane.services.registry import service

Shape = dict[str, Any]


NODE_ID = re.compile(r"^i-[0-9a-f]{8,17}$")


def node_id(node: str) -> str:
    """Accept the instance id or the Kubernetes Node name (hyperpod-i-...)."""
    iid = node.removeprefix("hyperpod-")
    if not NODE_ID.match(iid):
        raise InvalidInput(f"{node!r} is not a node id.", field="node",
                           hint="Use the instance id (i-...) or the Node name (hyperpod-i-...).")
    return iid


def target(cluster: str, node: str) -> str:
    return f"cluster/{cluster}/node/{node_id(node)}"


async def _views(ctx: Ctx, cluster: str) -> tuple[scope.ClusterRef, list[views.NodeView]]:
    """Every node joined once per change of the cloud's answers (services/observe/fleet)."""
    ref = await scope.cluster_ref(ctx, cluster)
    return ref, (await fleet.node_table(ctx, ref)).nodes


@service(Effect.READ, "node.list")
async def list_nodes(ctx: Ctx, cluster: str,
                     group: str | None = None) -> list[views.NodeView]:
    _, nodes = await _views(ctx, cluster)
    return [n for n in nodes if group is None or n["instance_group"] == group]


@service(Effect.READ, "node.get")
async def get_node(ctx: Ctx, cluster: str, node: str) -> views.NodeDetailView:
    ref, nodes = await _views(ctx, cluster)
    found = _find(nodes, ref, node)
    detail = await cloud_of(ctx.app).aws.hyperpod.describe_cluster_node(ref.hyperpod, found["id"])
    placement = detail.get("Placement") or {}
    return {**found, "availability_zone": placement.get("AvailabilityZone"),
            "private_ip": detail.get("PrivatePrimaryIp"),
            "capacity_type": detail.get("CapacityType"),
            "private_dns": detail.get("PrivateDnsHostname")}


def _find(nodes: list[views.NodeView], ref: scope.ClusterRef, node: str) -> views.NodeView:
    for n in nodes:
        if n["id"] == node_id(node):
            return n
    raise NotFound(f"Cluster {ref.name!r} has no node {node!r}.",
                   hint="List nodes with node_list (GET .../nodes).")


async def _start_action(ctx: Ctx, cluster: str, node: str, kind: str, plan: Shape,
                        key: str | None, dry_run: bool, confirm: bool | None) -> Outcome:
    """Common path: validate the node now (exists, Running), then start the operation."""
    ref = await scope.cluster_ref(ctx, cluster)
    iid = node_id(node)
    params = {"cluster_ref": ref.params(), "node": iid}
    if await key_used(ctx, key) and confirm is not False:
        return await start(ctx, kind, target(cluster, iid), params, key, plan)
    nodes = await cloud_of(ctx.app).aws.hyperpod.list_cluster_nodes(ref.hyperpod)
    found = next((n for n in nodes if n["InstanceId"] == iid), None)
    if found is None:
        raise NotFound(f"Cluster {ref.name!r} has no node {node!r}.",
                       hint="List nodes with node_list (GET .../nodes).")
    status = found["InstanceStatus"]["Status"]
    if kind != DELETE and status != "Running":
        raise Conflict(f"Node {iid} is {status}; only a Running node can be "
                       f"{'rebooted' if kind == REBOOT else 'replaced'}.",
                       hint="Wait for it (node_describe), or delete it.")
    plan = {"node": iid, "instance_group": found["InstanceGroupName"], "status": status, **plan}
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    if confirm is False:
        raise ConfirmationRequired(plan.get("warning") or f"{kind} needs confirmation.",
                                   hint="Send confirm=true once the user agreed "
                                   "(dry_run=true shows the plan).")
    return await start(ctx, kind, target(cluster, iid), params, key, plan)


@service(Effect.MUTATE, "node.reboot", target=lambda cluster, node, *_a, **_k: target(cluster,
                                                                                       node))
async def reboot_node(ctx: Ctx, cluster: str, node: str, *, dry_run: bool = False,
                      idempotency_key: str | None = None) -> Outcome:
    plan = {"action": "reboot", "note": "Instance storage is kept; running pods are "
            "interrupted while the node restarts."}
    return await _start_action(ctx, cluster, node, REBOOT, plan, idempotency_key, dry_run, None)


@service(Effect.DESTROY, "node.replace", target=lambda cluster, node, *_a, **_k: target(cluster,
                                                                                         node))
async def replace_node(ctx: Ctx, cluster: str, node: str, *, confirm: bool = False,
                       dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    plan = {"action": "replace", "warning": views.STORAGE_WARNING}
    return await _start_action(ctx, cluster, node, REPLACE, plan, idempotency_key, dry_run,
                               confirm)


@service(Effect.DESTROY, "node.delete", target=lambda cluster, node, *_a, **_k: target(cluster,
                                                                                        node))
async def delete_node(ctx: Ctx, cluster: str, node: str, *, confirm: bool = False,
                      dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    plan = {"action": "delete", "warning": "The node is terminated and its group's count "
            "drops by one; data on instance storage is lost."}
    return await _start_action(ctx, cluster, node, DELETE, plan, idempotency_key, dry_run,
                               confirm)
