"""Endpoint refusals with their own stable codes."""

from __future__ import annotations

from podplane.domain.errors import CloudError, Conflict


class EndpointExists(Conflict):
    code = "endpoint_exists"


class EndpointUnavailable(CloudError):
    """The Service has no ready pod behind it (the API server's proxy answered 503)."""

    code, status, title = "endpoint_unavailable", 503, "Endpoint unavailable"
