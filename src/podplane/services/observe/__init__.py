"""Shared observation of the cloud: one read per resource per interval, however many watch
(issue 21). `observed(cloud)` wraps a Cloud's ports; `cache_of(app)` is the process's cache."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from podplane.services.observe.cache import ObservationCache
from podplane.services.observe.ports import (
    EKS_READS,
    HYPERPOD_READS,
    S3_READS,
    Observed,
    ObservedConnector,
)

if TYPE_CHECKING:
    from podplane.services.cloud_access import Cloud

__all__ = ["ObservationCache", "cache_of", "observed"]


def observed(cloud: Cloud, cache: ObservationCache | None = None) -> Cloud:
    """The same Cloud with HyperPod, EKS, S3 list and Kubernetes reads going through `cache`."""
    cache = cache or ObservationCache.from_env()
    aws: Any = dataclasses.replace(
        cloud.aws, hyperpod=Observed(cloud.aws.hyperpod, cache, ("hyperpod",), HYPERPOD_READS),
        eks=Observed(cloud.aws.eks, cache, ("eks",), EKS_READS),
        s3=Observed(cloud.aws.s3, cache, ("s3",), S3_READS))
    out = type(cloud)(aws, ObservedConnector(cloud.kube, cache))
    out.observation = cache  # type: ignore[attr-defined]
    return out


def cache_of(cloud: Cloud) -> ObservationCache | None:
    """The cache behind a Cloud, if it was wrapped (fakes in unit tests are not)."""
    return getattr(cloud, "observation", None)
