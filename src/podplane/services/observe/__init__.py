"""Shared observation of the cloud: one read per resource per interval, however many watch
(issue 21). `observed(cloud)` wraps a Cloud's ports; `cache_of(app)` is the process's cache."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from podplane.services.observe.cache import ObservationCache
from podplane.services.observe.ports import (
    S3_READS,
    Observed,
    ObservedConnector,
)

if TYPE_CHECKING:
    from podplane.services.cloud_access import Cloud

__all__ = ["ObservationCache", "cache_of", "observed"]


def observed(cloud: Cloud, cache: ObservationCache | None = None) -> Cloud:
    """The same Cloud with every AWS read (S3: object lists only) and Kubernetes read going
    through `cache`."""
    cache = cache or ObservationCache.from_env()
    ports: dict[str, Any] = {
        f.name: Observed(getattr(cloud.aws, f.name), cache, (f.name,))
        for f in dataclasses.fields(cloud.aws) if f.name not in ("region", "s3")}
    aws: Any = dataclasses.replace(
        cloud.aws, s3=Observed(cloud.aws.s3, cache, ("s3",), S3_READS), **ports)
    out = type(cloud)(aws, ObservedConnector(cloud.kube, cache))
    out.observation = cache  # type: ignore[attr-defined]
    return out


def cache_of(cloud: Cloud) -> ObservationCache | None:
    """The cache behind a Cloud, if it was wrapped (fakes in unit tests are not)."""
    return getattr(cloud, "observation", None)
