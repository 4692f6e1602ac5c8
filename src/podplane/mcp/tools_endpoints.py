"""MCP rows for inference endpoints (included by mcp/tools.py). One REST call each.

An agent deploys, calls and scales a model in at most six calls: endpoint_create (dry_run
shows the plan: GPUs per node, manifests), endpoint_create, operation_wait, endpoint_invoke,
endpoint_scale, operation_wait. endpoint_update changes the image, model or parallelism."""

from __future__ import annotations

from podplane.domain.inference.requests import (
    ENDPOINT_NAME_MAX,
    MAX_REPLICAS,
    EndpointRequest,
    EndpointUpdate,
)
from podplane.mcp.tool import Tool, boolean, fields_of, integer, text
from podplane.mcp.tools_nodes import CLUSTER, DRY_RUN
from podplane.services.inference import service as endpoints
from podplane.services.inference.service import InvokeRequest

# The server checks names and model ids (422 naming the field); the catalogue an agent loads
# stays small without repeating those patterns in every tool.
NAME = text("The endpoint's name.", required=True, maxLength=ENDPOINT_NAME_MAX)
MODEL_TEXT = "s3://bucket/prefix or a Hugging Face id (org/name)."
ENDPOINTS = "/api/v1/clusters/{cluster}/endpoints"

TOOLS: tuple[Tool, ...] = (
    Tool("endpoint_create", "POST", ENDPOINTS, endpoints.create_endpoint,
         "Deploy a model with vLLM or SGLang on an instance group (Deployment + Service). "
         "Done when every replica is Ready. dry_run=true: the plan only.",
         {"cluster": CLUSTER, **fields_of(EndpointRequest),
          "model": text(MODEL_TEXT, required=True)}),
    Tool("endpoint_list", "GET", ENDPOINTS, endpoints.list_endpoints,
         "List the cluster's inference endpoints.",
         {"cluster": CLUSTER}),
    Tool("endpoint_get", "GET", ENDPOINTS + "/{name}", endpoints.get_endpoint,
         "Get an endpoint: spec, ready replicas, pods and nodes.",
         {"cluster": CLUSTER, "name": NAME}),
    Tool("endpoint_scale", "PATCH", ENDPOINTS + "/{name}", endpoints.scale_endpoint,
         "Set an endpoint's replicas (0 stops serving).",
         {"cluster": CLUSTER, "name": NAME,
          "replicas": integer("Pods wanted.", required=True, minimum=0,
                              maximum=MAX_REPLICAS),
          # no default sent: a call without replicas is still a scale (api/routers/endpoints)
          "dry_run": boolean("Only return the plan; change nothing.")}),
    Tool("endpoint_update", "PATCH", ENDPOINTS + "/{name}", endpoints.update_endpoint,
         "Rolling update of an endpoint's image, model, parallelism, max_model_len or dtype, "
         "then one real request; a failure rolls back (the operation says why). Ask the user "
         "first.",
         {"cluster": CLUSTER, "name": NAME, **fields_of(EndpointUpdate),
          "model": text(MODEL_TEXT), "image": text("Engine image.")}),
    Tool("endpoint_delete", "DELETE", ENDPOINTS + "/{name}", endpoints.delete_endpoint,
         "Delete an endpoint: its Deployment, pods and Service.",
         {"cluster": CLUSTER, "name": NAME, "dry_run": DRY_RUN}),
    Tool("endpoint_invoke", "POST", ENDPOINTS + "/{name}/invoke", endpoints.invoke_endpoint,
         "Send one small OpenAI-compatible request (completion or chat) to the endpoint "
         "through the Kubernetes API server.",
         {"cluster": CLUSTER, "name": NAME, **fields_of(InvokeRequest)}),
)
