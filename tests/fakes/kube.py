"""KubePort in memory (objects by apiVersion, kind, namespace and name) and a connector that
hands out one per EKS cluster."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from podplane.cloud.ports_kube import KubePort, WatchEvent
from podplane.domain.errors import NotFound

Manifest = dict[str, Any]
Key = tuple[str, str, str | None, str]


def _key(m: Manifest) -> Key:
    meta = m["metadata"]
    return m["apiVersion"], m["kind"], meta.get("namespace"), meta["name"]


class FakeKube:
    def __init__(self) -> None:
        self.objects: dict[Key, Manifest] = {}
        self.logs_of: dict[str, list[str]] = {}
        self._watchers: list[asyncio.Queue[WatchEvent]] = []

    def add(self, manifest: Manifest) -> None:
        known = _key(manifest) in self.objects
        self.objects[_key(manifest)] = manifest
        self._emit(WatchEvent("MODIFIED" if known else "ADDED", manifest))

    def _emit(self, event: WatchEvent) -> None:
        for queue in self._watchers:
            queue.put_nowait(event)

    async def apply(self, manifest: Manifest, *, field_manager: str = "podplane",
                    force: bool = False) -> Manifest:
        self.add(manifest)
        return manifest

    async def get(self, api_version: str, kind: str, name: str,
                  namespace: str | None = None) -> Manifest | None:
        return self.objects.get((api_version, kind, namespace, name))

    async def list(self, api_version: str, kind: str, *, namespace: str | None = None,
                   labels: dict[str, str] | None = None, **_: Any) -> list[Manifest]:
        wanted = labels or {}
        return [m for (v, k, ns, _n), m in self.objects.items()
                if (v, k) == (api_version, kind) and namespace in (None, ns)
                and all((m["metadata"].get("labels") or {}).get(lk) == lv
                        for lk, lv in wanted.items())]

    async def list_at(self, api_version: str, kind: str, *,
                      labels: dict[str, str] | None = None) -> tuple[list[Manifest], str]:
        return await self.list(api_version, kind, labels=labels), str(len(self.objects))

    async def watch(self, api_version: str, kind: str, *, namespace: str | None = None,
                    labels: dict[str, str] | None = None, resource_version: str | None = None,
                    **_: Any) -> AsyncIterator[WatchEvent]:
        """Without a version, what a new watch sees first: an ADDED event per object that
        exists now; then (and from a version) each change, until the caller stops."""
        queue: asyncio.Queue[WatchEvent] = asyncio.Queue()
        self._watchers.append(queue)
        try:
            if resource_version is None:
                for found in await self.list(api_version, kind, namespace=namespace,
                                             labels=labels):
                    yield WatchEvent("ADDED", found)
            while True:
                event = await queue.get()
                meta = event.object.get("metadata") or {}
                if (event.object.get("apiVersion"), event.object.get("kind")) == \
                        (api_version, kind) and namespace in (None, meta.get("namespace")) \
                        and all((meta.get("labels") or {}).get(k) == v
                                for k, v in (labels or {}).items()):
                    yield event
        finally:
            self._watchers.remove(queue)

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, *,
                    namespace: str | None = None, **_: Any) -> Manifest:
        found = await self.get(api_version, kind, name, namespace)
        if found is None:
            raise NotFound(f"{kind} {name} not found")
        found.update(patch)
        self._emit(WatchEvent("MODIFIED", found))
        return found

    async def delete(self, api_version: str, kind: str, name: str, *,
                     namespace: str | None = None, **_: Any) -> None:
        gone = self.objects.pop((api_version, kind, namespace, name), None)
        if gone is not None:
            self._emit(WatchEvent("DELETED", gone))

    async def logs(self, pod: str, namespace: str, **_: Any) -> AsyncIterator[str]:
        for line in self.logs_of.get(pod, []):
            yield line

    async def close(self) -> None:
        return None


class FakeKubeConnector:
    def __init__(self) -> None:
        self.clusters: dict[str, FakeKube] = {}
        self.forgotten: list[str] = []

    async def for_cluster(self, eks_cluster_name: str) -> KubePort:
        return self.clusters.setdefault(eks_cluster_name, FakeKube())

    async def forget(self, eks_cluster_name: str) -> None:
        self.forgotten.append(eks_cluster_name)

    async def close(self) -> None:
        return None
