"""Endpoint refusals with their own stable codes."""

from __future__ import annotations

from podplane.domain.errors import CloudError, Conflict


class EndpointExists(Conflict):
    code = "endpoint_exists"


class EndpointUnavailable(CloudError):
    """The Service has no ready pod behind it (the API server's proxy answered 503)."""

    code, status, title = "endpoint_unavailable", 503, "Endpoint unavailable"


class PoolPodsAssigned(Conflict):
    """A pool scale-in or delete that would remove a pod assigned to an endpoint or draining."""

    code = "pool_pods_assigned"


class PoolScaleUnsafe(Conflict):
    """Kubernetes' own victim order could remove a pod that is not one podplane chose."""

    code = "pool_scale_unsafe"


class PoolTooSmall(Conflict):
    """An assignment wants more free Ready pods than the pool has."""

    code = "pool_too_small"


class EndpointOnPool(Conflict):
    """Scale, update or delete of an endpoint whose pods are a warm pool's (its pool's assign
    changes it)."""

    code = "endpoint_on_pool"
