"""MCP rows for instance groups and nodes (included by mcp/tools.py). One REST call each."""

from __future__ import annotations

from podplane.mcp.tool import Tool, boolean, integer, text
from podplane.services.groups import service as groups
from podplane.services.nodes import service as nodes

DNS = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
CLUSTER = text("The managed cluster's name.", required=True, pattern=DNS, maxLength=63)
GROUP = text("The instance group's name.", required=True, pattern=DNS, maxLength=63)
NODE = text("The node: instance id (i-...) or Kubernetes Node name (hyperpod-i-...).",
            required=True, pattern="^(hyperpod-)?i-[0-9a-f]{8,17}$")
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
         "Add an instance group. Decide instance type, count, AZ and capacity type with the "
         "user after inspecting AZs, quotas and training plans; subnet placement, lifecycle "
         "scripts and execution role are derived. A training plan's AZ overrides the AZ given "
         "(the plan's notes say so). Capacity type and EFA-only can never change later.",
         {"cluster": CLUSTER,
          "name": text("New group name.", required=True, pattern=DNS, maxLength=63),
          "instance_type": text("SageMaker type, e.g. ml.g5.8xlarge.", required=True,
                                pattern=r"^ml\.[a-z0-9.-]+$", maxLength=40),
          "count": integer("Number of nodes.", required=True, minimum=1, maximum=1000),
          "availability_zone": text("AZ name, e.g. us-west-2a (default: the first group's).",
                                    pattern=r"^[a-z]{2}-[a-z]+-\d[a-z]$"),
          "capacity_type": text("on-demand | spot | training-plan. Use spot when the user "
                                "mentions spot.",
                                enum=["on-demand", "spot", "training-plan"]),
          "training_plan_arn": text("With capacity_type training-plan.", maxLength=256),
          "efa_only": boolean("EFA-only network interface (types with several EFA cards)."),
          "ebs_gb": integer("Extra EBS volume per node, GiB.", minimum=1, maximum=16384),
          "subnet_id": text("Put the group in this subnet (default: placed for you).",
                            pattern="^subnet-[0-9a-f]{8,17}$"),
          "new_subnet": boolean("Create a new /20 compute subnet for it."),
          "dry_run": DRY_RUN}),
    Tool("instance_group_scale", "PATCH", GROUPS + "/{group}", groups.scale_group,
         "Scale an instance group to `count` nodes (0 allowed). Same count: no change.",
         {"cluster": CLUSTER, "group": GROUP,
          "count": integer("The new node count.", required=True, minimum=0, maximum=1000),
          "dry_run": DRY_RUN}),
    Tool("instance_group_delete", "DELETE", GROUPS + "/{group}", groups.delete_group,
         "Delete an instance group: all its nodes are terminated (instance storage lost).",
         {"cluster": CLUSTER, "group": GROUP, "dry_run": DRY_RUN}),
    Tool("node_list", "GET", NODES, nodes.list_nodes,
         "List nodes with health joined from HyperPod (instance status) and Kubernetes "
         "(node-health-status, deep-health-check-status, fault type and reason), GPU "
         "allocation, and for an unhealthy node the suggested next step "
         "(investigate -> reboot -> replace).",
         {"cluster": CLUSTER,
          "instance_group": text("Only this group's nodes.", pattern=DNS, maxLength=63)}),
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
