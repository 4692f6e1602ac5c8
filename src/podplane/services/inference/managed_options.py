"""What a managed create adds to the operator's config beyond the model server: KV cache,
intelligent routing and autoscaling (domain/inference/managed_options.py). Autoscaling's
trigger queries the cluster's Amazon Managed Prometheus workspace, the one the
hyperpod-observability feature writes the cluster's metrics to: refused (409) while that
feature is off, since nothing would scrape the engine."""

from __future__ import annotations

from typing import Any

from podplane.domain.errors import Conflict
from podplane.domain.features import hyperpod_observability as hpo
from podplane.domain.features.catalog import HYPERPOD_OBSERVABILITY
from podplane.domain.inference import managed_options as options
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.features.state import desired_of

Shape = dict[str, Any]


async def amp_url(ctx: Ctx, cluster: str) -> str:
    """The workspace's Prometheus endpoint (AMP DescribeWorkspace `prometheusEndpoint`)."""
    want = (await desired_of(ctx.app, cluster))[HYPERPOD_OBSERVABILITY]
    if not want.enabled:
        raise Conflict("Managed autoscaling reads the engine's metrics from the cluster's "
                       "Prometheus workspace.", hint="Enable the hyperpod-observability "
                       "feature (feature_set) first, or leave autoscaling out.")
    amp = cloud_of(ctx.app).aws.amp
    ws_id = want.settings.get("workspace_id") or next(
        (w["workspaceId"] for w in await amp.list_workspaces() if hpo.ours(w, cluster)), None)
    found = await amp.describe_workspace(ws_id) if ws_id else None
    if not found or not found.get("prometheusEndpoint"):
        raise Conflict("The hyperpod-observability feature has no workspace yet.",
                       hint="Wait for its operation (feature_get), then retry.")
    return str(found["prometheusEndpoint"]).rstrip("/")


async def spec_fields(ctx: Ctx, cluster: str, body: Shape) -> Shape:
    options.check(body)
    url = await amp_url(ctx, cluster) if body.get("autoscaling") else None
    return options.options(body, url)
