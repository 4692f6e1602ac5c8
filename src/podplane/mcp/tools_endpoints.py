"""MCP rows for inference endpoints (included by mcp/tools.py). One REST call each.

An agent deploys, calls and scales a model in at most six calls: endpoint_create (dry_run
shows the plan: GPUs per node, manifests), endpoint_create, operation_wait, endpoint_invoke,
endpoint_scale, operation_wait. endpoint_update changes the image, model or parallelism."""

from __future__ import annotations

from podplane.domain.effects import DRY_RUN as PLAN_ONLY
from podplane.domain.inference.requests import (
    ENDPOINT_NAME_MAX,
    MAX_REPLICAS,
    EndpointRequest,
    EndpointUpdate,
)
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.mcp.tool import CLUSTER, DRY_RUN, NEXT_CURSOR, Tool, boolean, fields_of, integer, text
from podplane.services import pod_logs
from podplane.services.inference import logs as endpoint_logs
from podplane.services.inference import service as endpoints
from podplane.services.inference.service import InvokeRequest

NAME = text("Endpoint.", required=True, pattern=DNS_LABEL_PATTERN, minLength=1,
            maxLength=ENDPOINT_NAME_MAX)
ENDPOINTS = "/api/v1/clusters/{cluster}/endpoints"

TOOLS: tuple[Tool, ...] = (
    Tool("endpoint_create", "POST", ENDPOINTS, endpoints.create_endpoint,
         "Deploy a model with vLLM or SGLang on an instance group. Done when every replica "
         "is Ready.",
         {"cluster": CLUSTER, **fields_of(EndpointRequest)}),
    Tool("endpoint_list", "GET", ENDPOINTS, endpoints.list_endpoints,
         "List the cluster's inference endpoints.",
         {"cluster": CLUSTER}),
    Tool("endpoint_get", "GET", ENDPOINTS + "/{name}", endpoints.get_endpoint,
         "An endpoint: spec, ready replicas, pods and nodes.",
         {"cluster": CLUSTER, "name": NAME}),
    Tool("endpoint_scale", "PATCH", ENDPOINTS + "/{name}", endpoints.scale_endpoint,
         "Set an endpoint's replicas (0 stops serving).",
         {"cluster": CLUSTER, "name": NAME,
          "replicas": integer("Pods.", required=True, minimum=0,
                              maximum=MAX_REPLICAS),
          # no default sent: a call without replicas is still a scale (api/routers/endpoints)
          "dry_run": boolean(PLAN_ONLY)}),
    Tool("endpoint_update", "PATCH", ENDPOINTS + "/{name}", endpoints.update_endpoint,
         "Roll out an endpoint's new image, model, parallelism, max_model_len or dtype, then "
         "one real request (a failure rolls back, saying why); or set its autoscaling. Ask "
         "the user first.",
         {"cluster": CLUSTER, "name": NAME, **fields_of(EndpointUpdate)}),
    Tool("endpoint_delete", "DELETE", ENDPOINTS + "/{name}", endpoints.delete_endpoint,
         "Delete an endpoint (Deployment, pods, Service).",
         {"cluster": CLUSTER, "name": NAME, "dry_run": DRY_RUN}),
    Tool("endpoint_logs", "GET", ENDPOINTS + "/{name}/logs", endpoint_logs.endpoint_logs,
         "An endpoint's engine and router pod logs, bounded and paged.",
         {"cluster": CLUSTER, "name": NAME,
          "pod": text("Only this pod.", pattern=DNS_LABEL_PATTERN, maxLength=253),
          "tail": integer("Last N lines per pod.", minimum=1,
                          maximum=pod_logs.MAX_LINES_PER_POD),
          "cursor": integer(NEXT_CURSOR, minimum=0, maximum=10**7)}),
    Tool("endpoint_invoke", "POST", ENDPOINTS + "/{name}/invoke", endpoints.invoke_endpoint,
         "One small OpenAI-compatible request to the endpoint, through the Kubernetes API "
         "server.",
         {"cluster": CLUSTER, "name": NAME, **fields_of(InvokeRequest)}),
)
