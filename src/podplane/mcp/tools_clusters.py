"""MCP tool rows for clusters and inspect-before-create (each row is one REST call).

Bodies are not described here: a body tool's arguments are read from the same domain
declaration the REST route validates against (`fields_of`)."""

from __future__ import annotations

from podplane.domain.clusters import ClusterRequest, ImportRequest
from podplane.domain.names import (
    AVAILABILITY_ZONE_PATTERN,
    EKS_CLUSTER_PATTERN,
    INSTANCE_TYPE_MAX,
    INSTANCE_TYPE_PATTERN,
)
from podplane.mcp.tool import CLUSTER, DRY_RUN, Tool, boolean, fields_of, integer, text
from podplane.services.clusters import inspect, reconcile
from podplane.services.clusters import service as clusters
from podplane.services.diagnostics import doctor

TOOLS: tuple[Tool, ...] = (
    Tool("cluster_list", "GET", "/api/v1/clusters", clusters.list_clusters,
         "List managed clusters and every EKS / HyperPod cluster in the account, with state. "
         "Call it before a create."),
    Tool("cluster_get_status", "GET", "/api/v1/clusters/{name}", clusters.get_cluster,
         "A cluster's cloud status (EKS, HyperPod, add-ons) and its last operation's steps.",
         {"name": CLUSTER}),
    Tool("cluster_plan_create", "POST", "/api/v1/cluster-plans", clusters.plan_create,
         "Dry run of cluster_create: the derived plan and pre-flight findings. Decide AZ "
         "(region_list_azs), instance type (instance_type_list) and capacity with the user.",
         fields_of(ClusterRequest)),
    Tool("cluster_create", "POST", "/api/v1/clusters", clusters.create_cluster,
         "Create a cluster: EKS + HyperPod, ~25-40 min. Already there as asked: "
         "changed=false.",
         fields_of(ClusterRequest)),
    Tool("cluster_import", "POST", "/api/v1/clusters/import", clusters.import_cluster,
         "Manage an existing EKS cluster (and its HyperPod cluster) like a created one, "
         "after testing the connection and detecting add-ons and operators.",
         fields_of(ImportRequest)),
    Tool("cluster_delete", "DELETE", "/api/v1/clusters/{name}", clusters.delete_cluster,
         "Delete a cluster: HyperPod, EKS, network, IAM; the shared S3 bucket stays.",
         {"name": CLUSTER,
          "force": boolean("Also resources not tagged as podplane's.", default=False),
          "delete_resources": boolean("Delete cloud resources; an imported cluster is "
                                      "otherwise only detached.")}),
    Tool("cluster_reconcile", "POST", "/api/v1/clusters/{name}/reconcile",
         reconcile.reconcile_cluster,
         "Put a degraded cluster's drifted dependencies back; never deletes. dry_run first "
         "and show the user the plan. Nothing drifted: changed=false.",
         {"name": CLUSTER, "dry_run": DRY_RUN}),
    Tool("region_list_azs", "GET", "/api/v1/availability-zones",
         inspect.list_availability_zones,
         "The region's availability zones: names and AZ ids (stable across accounts)."),
    Tool("instance_type_list", "GET", "/api/v1/instance-types", inspect.list_instance_types,
         "HyperPod instance types: AZs offering them, GPUs, GPU memory, EFA, vCPU, memory, "
         "approximate on-demand price.",
         {"availability_zone": text("Only types offered in this AZ.",
                                    pattern=AVAILABILITY_ZONE_PATTERN),
          "accelerated_only": boolean("Only GPU / Trainium types.", default=False)}),
    Tool("quota_get", "GET", "/api/v1/quotas", inspect.get_quota,
         "The SageMaker '<type> for cluster usage' quota: limit, in use, available.",
         {"instance_type": text("e.g. ml.p5.48xlarge", required=True,
                                pattern=INSTANCE_TYPE_PATTERN, maxLength=INSTANCE_TYPE_MAX)}),
    Tool("training_plan_list", "GET", "/api/v1/training-plans", inspect.list_training_plans,
         "Training plans in the account: instance type, AZ, instances available, dates."),
    Tool("doctor_run", "GET", "/api/v1/doctor", doctor.run_doctor,
         "Check the account before a create: credentials, HyperPod service-linked role, "
         "IAM permissions, quota for count x instance_type, EKS access entry. Each finding: "
         "ok/warn/fail and its fix.",
         {"instance_type": text("e.g. ml.p5.48xlarge", pattern=INSTANCE_TYPE_PATTERN,
                                maxLength=INSTANCE_TYPE_MAX),
          "count": integer("Instances.", minimum=1, maximum=1000,
                           default=1),
          "cluster": text("A managed or EKS cluster: check its access entry.",
                          pattern=EKS_CLUSTER_PATTERN, maxLength=100)}),
)
