"""MCP rows for instance groups and nodes (included by mcp/tools.py). One REST call each."""

from __future__ import annotations

from podplane.domain.clusters import ClusterName
from podplane.domain.group_requests import GroupName, NewGroupRequest, ScaleRequest
from podplane.domain.names import DNS_LABEL_MAX, DNS_LABEL_PATTERN, NODE_PATTERN
from podplane.mcp.tool import Tool, boolean, fields_of, text, typed
from podplane.services.groups import service as groups
from podplane.services.nodes import service as nodes

CLUSTER = typed(ClusterName, "The managed cluster's name.", required=True)
GROUP = typed(GroupName, "The instance group's name.", required=True)
NODE = text("The node: instance id (i-...) or Kubernetes Node name (hyperpod-i-...).",
            required=True, pattern=NODE_PATTERN, minLength=10, maxLength=40)
DRY_RUN = boolean("Only return the plan; change nothing.", default=False)
GROUPS = "/api/v1/clusters/{cluster}/instance-groups"
NODES = "/api/v1/clusters/{cluster}/nodes"

TOOLS: tuple[Tool, ...] = (
    Tool("instance_group_list", "GET", GROUPS, groups.list_groups,
         "List a cluster's instance groups from HyperPod: type, status, target and current "
         "count, capacity type, EFA-only, subnets.", {"cluster": CLUSTER}),
    Tool("instance_group_get", "GET", GROUPS + "/{group}", groups.get_group,
         "Get one instance group as HyperPod reports it now.",
         {"cluster": CLUSTER, "group": GROUP}),
    Tool("instance_group_add", "POST", GROUPS, groups.add_group,
         "Add an instance group. Decide type, count, AZ and capacity type with the user after "
         "reading AZs, quotas and training plans (a plan's AZ wins); the rest is derived. "
         "Capacity type and EFA-only never change later.",
         {"cluster": CLUSTER, **fields_of(NewGroupRequest)}),
    Tool("instance_group_scale", "PATCH", GROUPS + "/{group}", groups.scale_group,
         "Scale an instance group to `count` nodes (0 allowed). Same count: no change. "
         "Fewer nodes terminates instances: admin only, with confirm=true (ask the user).",
         {"cluster": CLUSTER, "group": GROUP, **fields_of(ScaleRequest, require=("count",))}),
    Tool("instance_group_delete", "DELETE", GROUPS + "/{group}", groups.delete_group,
         "Delete an instance group: all its nodes are terminated (instance storage lost).",
         {"cluster": CLUSTER, "group": GROUP, "dry_run": DRY_RUN}),
    Tool("node_list", "GET", NODES, nodes.list_nodes,
         "List nodes with health joined from HyperPod (instance status) and Kubernetes "
         "(node-health-status, deep-health-check-status, fault type and reason), GPU "
         "allocation, and for an unhealthy node the suggested next step "
         "(investigate -> reboot -> replace).",
         {"cluster": CLUSTER,
          "instance_group": text("Only this group's nodes.", pattern=DNS_LABEL_PATTERN,
                                 maxLength=DNS_LABEL_MAX)}),
    Tool("node_describe", "GET", NODES + "/{node}", nodes.get_node,
         "Describe one node: health from both sides, fault, GPUs, AZ, IP, capacity type, "
         "and the escalation investigate -> reboot -> replace with the suggested step.",
         {"cluster": CLUSTER, "node": NODE}),
    Tool("node_reboot", "POST", NODES + "/{node}/reboot", nodes.reboot_node,
         "Reboot a Running node (keeps instance storage). Investigate first (node_describe).",
         {"cluster": CLUSTER, "node": NODE, "dry_run": DRY_RUN}),
    Tool("node_replace", "POST", NODES + "/{node}/replace", nodes.replace_node,
         "Replace a node with a new instance when a reboot did not help. Instance storage "
         "(local NVMe) is lost; tell the user before confirming.",
         {"cluster": CLUSTER, "node": NODE, "dry_run": DRY_RUN}),
    Tool("node_delete", "DELETE", NODES + "/{node}", nodes.delete_node,
         "Terminate a node; its group's count drops by one.",
         {"cluster": CLUSTER, "node": NODE, "dry_run": DRY_RUN}),
)
