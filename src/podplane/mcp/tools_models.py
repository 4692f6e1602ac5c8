"""MCP rows for models in the cluster's bucket (included by mcp/tools.py).

A self-managed deployment from scratch: model_download, operation_wait, endpoint_create (model
= the download's s3:// uri), operation_wait, endpoint_invoke."""

from __future__ import annotations

from podplane.domain.inference.downloads import DownloadRequest
from podplane.mcp.tool import CLUSTER, Tool, fields_of
from podplane.services.inference import downloads

MODELS = "/api/v1/clusters/{cluster}/models"

TOOLS: tuple[Tool, ...] = (
    Tool("model_download", "POST", MODELS, downloads.download_model,
         "Download a model to s3://<bucket>/models/<name>/ with a Job; done when the files "
         "are checked. Its uri is an endpoint's model.",
         {"cluster": CLUSTER, **fields_of(DownloadRequest)}),
    Tool("model_list", "GET", MODELS, downloads.list_models,
         "List models under s3://<bucket>/models/.", {"cluster": CLUSTER}),
)
