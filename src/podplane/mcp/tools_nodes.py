"""MCP rows for instance groups and nodes (included by mcp/tools.py). One REST call each."""

from __future__ import annotations

from podplane.domain.group_requests import GroupName, NewGroupRequest, ScaleRequest
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN, NODE_PATTERN
from podplane.mcp.tool import CLUSTER, DRY_RUN, Tool, fields_of, text, typed
from podplane.services.groups import service as groups
from podplane.services.nodes import service as nodes

GROUP = typed(GroupName, "Instance group.", required=True)
NODE = text("Instance id (i-...) or Node name (hyperpod-i-...).", required=True,
            pattern=NODE_PATTERN, minLength=10, maxLength=40)
GROUPS = "/api/v1/clusters/{cluster}/instance-groups"
NODES = "/api/v1/clusters/{cluster}/nodes"

TOOLS: tuple[Tool, ...] = (
    Tool("instance_group_list", "GET", GROUPS, groups.list_groups,
         "A cluster's instance groups from HyperPod: type, status, target and current count, "
         "capacity type, EFA-only, subnets.", {"cluster": CLUSTER}),
    Tool("instance_group_get", "GET", GROUPS + "/{group}", groups.get_group,
         "One instance group as HyperPod reports it now.",
         {"cluster": CLUSTER, "group": GROUP}),
    Tool("instance_group_add", "POST", GROUPS, groups.add_group,
         "Add an instance group. Decide type, count, AZ and capacity type with the user after "
         "reading AZs, quotas and training plans; the rest is derived. Capacity type and "
         "EFA-only never change later.",
         {"cluster": CLUSTER, **fields_of(NewGroupRequest)}),
    Tool("instance_group_scale", "PATCH", GROUPS + "/{group}", groups.scale_group,
         "Scale an instance group to `count` nodes. Same count: no change. Fewer nodes: "
         "admin only, with confirm=true (ask the user).",
         {"cluster": CLUSTER, "group": GROUP, **fields_of(ScaleRequest, require=("count",))}),
    Tool("instance_group_delete", "DELETE", GROUPS + "/{group}", groups.delete_group,
         "Delete an instance group, terminating its nodes (instance storage lost).",
         {"cluster": CLUSTER, "group": GROUP, "dry_run": DRY_RUN}),
    Tool("node_list", "GET", NODES, nodes.list_nodes,
         "Nodes with health from HyperPod and Kubernetes (health labels, fault type and "
         "reason), GPU allocation, and an unhealthy node's next step (investigate -> reboot "
         "-> replace).",
         {"cluster": CLUSTER,
          "instance_group": text("Only this group's nodes.", pattern=DNS_LABEL_PATTERN,
                                 maxLength=DNS_LABEL_MAX)}),
    Tool("node_describe", "GET", NODES + "/{node}", nodes.get_node,
         "One node: health from both sides, fault, GPUs, AZ, IP, capacity type, the "
         "suggested step (investigate -> reboot -> replace).",
         {"cluster": CLUSTER, "node": NODE}),
    Tool("node_reboot", "POST", NODES + "/{node}/reboot", nodes.reboot_node,
         "Reboot a Running node (keeps instance storage), after node_describe.",
         {"cluster": CLUSTER, "node": NODE, "dry_run": DRY_RUN}),
    Tool("node_replace", "POST", NODES + "/{node}/replace", nodes.replace_node,
         "Replace a node with a new instance when a reboot did not help. Its local NVMe "
         "storage is lost: tell the user.",
         {"cluster": CLUSTER, "node": NODE, "dry_run": DRY_RUN}),
    Tool("node_delete", "DELETE", NODES + "/{node}", nodes.delete_node,
         "Terminate a node; its group's count drops by one.",
         {"cluster": CLUSTER, "node": NODE, "dry_run": DRY_RUN}),
)
