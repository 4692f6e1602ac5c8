"""The observation cache placed over the cloud ports, so every reader (status, node views, the
drift check, engine steps) reads through it without knowing: the reads below are cached per
resource; any other call is passed through and, being a change we make, forgets what was
retained for that service (or that Kubernetes cluster) so the next read sees it."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from podplane.cloud.ports_kube import KubeConnectorPort, KubePort
from podplane.services.observe.cache import ObservationCache
from podplane.services.observe.informer import Informers

# Reads served from the cache, per port; everything else is a call we pass through. On the AWS
# ports every read is (describe_*, list_*, get_*, ...): a cluster's status, node and feature
# views read HyperPod, EKS, IAM, STS, FSx, AMP, EC2 and MLflow on every request, and a console
# tab or agent polling them must cost no cloud read past the first in an interval
# (bench/fleet_status.py counts them for 1, 10 and 100 watchers).
AWS_READ_PREFIXES = ("describe_", "list_", "get_", "search_", "latest_")
AWS_READ_NAMES = frozenset({"caller_identity", "cluster_quota", "sagemaker_cluster_quota"})
KUBE_READS = frozenset({"list", "get"})
# A job view lists its prefixes on every read and the console polls a running job every 3 s;
# objects our pods write appear at the next interval (S3 lists are strongly consistent after
# a write: S3 User Guide, "Amazon S3 data consistency model").
S3_READS = frozenset({"list_objects"})
# Other reads and streams pass through without forgetting anything; so does a request through
# the API server's Service proxy, which reaches an application and changes no object.
READ_PREFIXES = ("describe_", "list_", "get_", "search_", "latest_", "watch", "logs", "close",
                 "proxy")


def _freeze(value: Any) -> Hashable:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value  # type: ignore[no-any-return]


class Observed:
    """A port whose `reads` go through the cache under `scope`; other async methods invalidate
    `scope` after they return (a failed call may still have changed something)."""

    def __init__(self, port: Any, cache: ObservationCache, scope: tuple[Hashable, ...],
                 reads: frozenset[str] | None = None) -> None:
        """`reads` None: every method named as an AWS read (AWS_READ_PREFIXES)."""
        self._port, self._cache, self._scope, self._reads = port, cache, scope, reads

    def _is_read(self, name: str) -> bool:
        if self._reads is None:
            return name.startswith(AWS_READ_PREFIXES) or name in AWS_READ_NAMES
        return name in self._reads

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._port, name)
        if self._is_read(name) and callable(attr):
            async def read(*args: Any, **kwargs: Any) -> Any:
                key = (*self._scope, name, _freeze(args), _freeze(kwargs))
                return await self._cache.read(key, lambda: attr(*args, **kwargs))
            return read
        if name.startswith(("_", *READ_PREFIXES)) or not callable(attr):
            return attr

        async def change(*args: Any, **kwargs: Any) -> Any:
            try:
                return await attr(*args, **kwargs)
            finally:
                self._cache.invalidate(*self._scope)
        return change


class WatchedKube(Observed):
    """A cluster's port whose whole-cluster Node and Pod lists come from a watch (informer)
    when the cache watches; every other read as `Observed`."""

    def __init__(self, port: KubePort, cache: ObservationCache, eks: str,
                 informers: Informers) -> None:
        super().__init__(port, cache, ("kube", eks), KUBE_READS)
        self._eks, self._informers = eks, informers

    async def list(self, api_version: str, kind: str, **match: Any) -> Any:
        await self._cache.sync()  # another replica's write resyncs the informer first
        informer = self._informers.get(self._eks, self._port, api_version, kind, match) \
            if self._cache.watching else None
        if informer is not None and (found := await informer.read()) is not None:
            return found
        return await self.__getattr__("list")(api_version, kind, **match)


class ObservedConnector:
    """The per-cluster Kubernetes clients, each observed under ("kube", eks-cluster)."""

    def __init__(self, inner: KubeConnectorPort, cache: ObservationCache) -> None:
        self._inner, self._cache = inner, cache
        self.informers = Informers(cache.clock)
        cache.on_invalidate.append(self.informers.invalidated)

    async def for_cluster(self, eks_cluster_name: str) -> KubePort:
        port = await self._inner.for_cluster(eks_cluster_name)
        return WatchedKube(port, self._cache, eks_cluster_name, self.informers)

    async def forget(self, eks_cluster_name: str) -> None:
        self._cache.invalidate("kube", eks_cluster_name)
        await self._inner.forget(eks_cluster_name)

    async def close(self) -> None:
        self.informers.close()
        await self._inner.close()
