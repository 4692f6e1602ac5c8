"""Diagnose one node: HyperPod's instance status, the Node's health labels, taints and
conditions, and the Kubernetes events about it, judged by domain/diagnostics/node.py.

Read-only (a viewer may run it); it suggests the next rung of investigate -> reboot ->
replace as a tool call and never makes it.
"""

from __future__ import annotations

from dataclasses import replace

from podplane.domain.diagnostics.node import NodeFacts, diagnose
from podplane.domain.diagnostics.verdict import Verdict
from podplane.domain.effects import Effect
from podplane.domain.errors import CloudError, NotFound
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.groups import cloud as gc
from podplane.services.nodes.service import node_id
from podplane.services.registry import service

# The kubelet and node controllers record a Node's events in the default namespace
# (`kubectl describe node` lists them from there).
EVENT_NAMESPACE = "default"


@service(Effect.READ, "diagnose.node")
async def diagnose_node(ctx: Ctx, cluster: str, node: str) -> Verdict:
    iid = node_id(node)
    ref = await gc.cluster_ref(ctx, cluster)
    cloud = cloud_of(ctx.app)
    summaries = await cloud.aws.hyperpod.list_cluster_nodes(ref.hyperpod)
    summary = next((n for n in summaries if n["InstanceId"] == iid), None)
    if summary is None:
        raise NotFound(f"Cluster {ref.name!r} has no node {node!r}.",
                       hint="List nodes with node_list (GET .../nodes).")
    described = await gc.describe(cloud.aws.hyperpod, ref)
    facts = NodeFacts(ref.name, iid, summary, node_recovery=described.get("NodeRecovery"))
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
