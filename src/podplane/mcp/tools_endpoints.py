"""MCP rows for inference endpoints (included by mcp/tools.py). One REST call each.

An agent deploys, calls and scales a model in at most six calls: endpoint_create (dry_run
shows the plan: GPUs per node, manifests), endpoint_create, operation_wait, endpoint_invoke,
endpoint_scale, operation_wait."""

from __future__ import annotations

from podplane.domain.inference.requests import ENDPOINT_NAME_MAX, MAX_REPLICAS, EndpointRequest
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.mcp.tool import Tool, fields_of, integer, text
from podplane.mcp.tools_nodes import CLUSTER, DRY_RUN
from podplane.services.inference import service as endpoints
from podplane.services.inference.service import InvokeRequest

NAME = text("The endpoint's name.", required=True, pattern=DNS_LABEL_PATTERN, minLength=1,
            maxLength=ENDPOINT_NAME_MAX)
ENDPOINTS = "/api/v1/clusters/{cluster}/endpoints"

TOOLS: tuple[Tool, ...] = (
    Tool("endpoint_create", "POST", ENDPOINTS, endpoints.create_endpoint,
         "Deploy a model with vLLM or SGLang on an instance group (Deployment + Service; GPUs "
         "per pod = tensor_parallel). Done when every replica is Ready. dry_run=true: the "
         "plan only.",
         {"cluster": CLUSTER, **fields_of(EndpointRequest)}),
    Tool("endpoint_list", "GET", ENDPOINTS, endpoints.list_endpoints,
         "List the cluster's inference endpoints with engine, model and ready replicas.",
         {"cluster": CLUSTER}),
    Tool("endpoint_get", "GET", ENDPOINTS + "/{name}", endpoints.get_endpoint,
         "Get an endpoint: engine, image, model, parallelism, ready replicas, each pod with "
         "its node, the Service and its load balancer hostname.",
         {"cluster": CLUSTER, "name": NAME}),
    Tool("endpoint_scale", "PATCH", ENDPOINTS + "/{name}", endpoints.scale_endpoint,
         "Set an endpoint's replicas (0 stops serving); the operation ends when exactly that "
         "many pods are Ready.",
         {"cluster": CLUSTER, "name": NAME,
          "replicas": integer("Pods wanted.", required=True, minimum=0,
                              maximum=MAX_REPLICAS),
          "dry_run": DRY_RUN}),
    Tool("endpoint_delete", "DELETE", ENDPOINTS + "/{name}", endpoints.delete_endpoint,
         "Delete an endpoint: its Deployment, pods and Service.",
         {"cluster": CLUSTER, "name": NAME, "dry_run": DRY_RUN}),
    Tool("endpoint_invoke", "POST", ENDPOINTS + "/{name}/invoke", endpoints.invoke_endpoint,
         "Send one small OpenAI-compatible request (completion, or chat with chat=true) to "
         "the endpoint through the Kubernetes API server, as podplane; returns the engine's "
         "answer with its token usage. Needs the operator role (it uses GPU time).",
         {"cluster": CLUSTER, "name": NAME, **fields_of(InvokeRequest)}),
)
