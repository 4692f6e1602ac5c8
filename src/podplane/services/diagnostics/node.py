"""Diagnose one node: HyperPod's instance status and its cluster events about the instance,
the Node's health labels, taints and conditions, and the Kubernetes events about it, judged
by domain/diagnostics/node.py.

Read-only (a viewer may run it); it suggests the next rung of investigate -> reboot ->
replace as a tool call and never makes it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from podplane.cloud.ports_aws import HyperPodPort
from podplane.domain.diagnostics.node import NodeFacts, diagnose
from podplane.domain.diagnostics.verdict import Verdict
from podplane.domain.effects import Effect
from podplane.domain.errors import CloudError, NotFound
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.nodes.service import node_id
from podplane.services.registry import service

# The kubelet and node controllers record a Node's events in the default namespace
# (`kubectl describe node` lists them from there).
EVENT_NAMESPACE = "default"
EVENTS_READ = 10


async def cluster_events(hyperpod: HyperPodPort, described: dict[str, Any],
                         node_id: str | None = None) -> tuple[list[dict[str, Any]],
                                                              tuple[str, ...]]:
    """HyperPod's newest events (of one instance when `node_id` is given), and a note when
    they could not be read. Only continuous-provisioning clusters have events (botocore:
    ListClusterEvents "is only supported when the NodeProvisioningMode is set to
    Continuous"), so others are not asked."""
    if described.get("NodeProvisioningMode") != "Continuous":
        return [], ()
    try:
        return await hyperpod.list_cluster_events(described["ClusterName"], node_id,
                                                  EVENTS_READ), ()
    except CloudError as err:
        return [], (f"HyperPod's cluster events could not be read: {err.message}",)


@service(Effect.READ, "diagnose.node")
async def diagnose_node(ctx: Ctx, cluster: str, node: str) -> Verdict:
    iid = node_id(node)
    ref = await scope.cluster_ref(ctx, cluster)
    cloud = cloud_of(ctx.app)
    summaries = await cloud.aws.hyperpod.list_cluster_nodes(ref.hyperpod)
    summary = next((n for n in summaries if n["InstanceId"] == iid), None)
    if summary is None:
        raise NotFound(f"Cluster {ref.name!r} has no node {node!r}.",
                       hint="List nodes with node_list (GET .../nodes).")
    described = await scope.describe(cloud.aws.hyperpod, ref)
    events, notes = await cluster_events(cloud.aws.hyperpod, described, iid)
    facts = NodeFacts(ref.name, iid, summary, node_recovery=described.get("NodeRecovery"),
                      cluster_events=tuple(events), notes=notes)
    name = f"hyperpod-{iid}"
    try:
        kube = await cloud.kube_for(ref.eks)
        found = await kube.get("v1", "Node", name)
        events = await kube.list("v1", "Event", namespace=EVENT_NAMESPACE,
                                 fields={"involvedObject.kind": "Node",
                                         "involvedObject.name": name})
    except CloudError as err:
        if err.code != "kube_unreachable":
            raise
        return diagnose(replace(facts, kube_reachable=False))
    events.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return diagnose(replace(facts, kube=found, events=tuple(events)))
