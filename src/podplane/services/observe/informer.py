"""A Kubernetes list kept current by a watch instead of listed again each interval (issue 21).

One list, then a watch from that list's resourceVersion: ADDED and MODIFIED replace an object,
DELETED removes it, BOOKMARK only moves the version ("Efficient detection of changes" in the
Kubernetes API concepts, kubernetes.io/docs/reference/using-api/api-concepts/). When the watch
ends in error (410 Gone for a compacted version, a dropped connection) the informer is not
`live` until a new list succeeds, and readers fall back to a plain list meanwhile. Our own
write to the cluster (`resync`) starts a new list, so a reader after it sees the write, as
with the read-through cache. An informer nobody has read for `idle_stop` seconds stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from podplane.cloud.ports_kube import KubePort, Manifest, WatchEvent

log = logging.getLogger("podplane.observe")
RETRY_MAX = 30.0  # seconds between relists while the API server cannot be watched


def _key(obj: Manifest) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


class Informer:
    def __init__(self, port: KubePort, api_version: str, kind: str, *,
                 labels: dict[str, str] | None, clock: Callable[[], float],
                 idle_stop: float) -> None:
        self.port, self.api_version, self.kind, self.labels = port, api_version, kind, labels
        self.clock, self.idle_stop = clock, idle_stop
        self.objects: dict[tuple[str, str], Manifest] = {}
        self.live = False
        self.lists = 0  # list calls made (a watched list is not listed again per read)
        self.last_read = clock()
        self._snapshot: list[Manifest] | None = None
        self._synced: asyncio.Future[bool] | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    async def read(self) -> list[Manifest] | None:
        """The current list, or None when it is not being watched (the caller lists)."""
        self.last_read = self.clock()
        if self._task is None or self._task.done():
            self._start()
        assert self._synced is not None
        if not self.live and not self._synced.done():  # the first list (or one after resync)
            await asyncio.shield(self._synced)
        if not self.live:
            return None
        if self._snapshot is None:  # rebuilt once per change, shared by every reader after it
            self._snapshot = [self.objects[k] for k in sorted(self.objects)]
        return self._snapshot

    def resync(self) -> None:
        """We changed the cluster: the next read waits for a new list."""
        self.stop()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self._task, self.live = None, False

    def idle(self, now: float) -> bool:
        return now - self.last_read > self.idle_stop

    async def changed(self) -> None:
        """Wait for the next event that changed the list (tests and benches)."""
        self._changed.clear()
        await self._changed.wait()

    def _start(self) -> None:
        self._synced = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._run(self._synced))

    async def _run(self, synced: asyncio.Future[bool]) -> None:
        delay = 1.0
        try:
            while True:
                try:
                    version = await self._list()
                    _settle(synced, True)
                    delay = 1.0
                    async for event in self.port.watch(self.api_version, self.kind,
                                                       labels=self.labels,
                                                       resource_version=version):
                        self._apply(event)
                except Exception as err:  # noqa: BLE001 - any end of the stream: list again
                    self.live = False
                    log.info("watch of %s ended (%s); listing again in %.0f s",
                             self.kind, getattr(err, "code", type(err).__name__), delay)
                    _settle(synced, False)
                await asyncio.sleep(delay)
                delay = min(RETRY_MAX, delay * 2)
        finally:
            self.live = False
            _settle(synced, False)

    async def _list(self) -> str:
        self.lists += 1
        found, version = await self.port.list_at(self.api_version, self.kind,
                                                 labels=self.labels)
        self.objects = {_key(o): o for o in found}
        self._snapshot, self.live = None, True
        self._changed.set()
        return version

    def _apply(self, event: WatchEvent) -> None:
        if event.type == "BOOKMARK":
            return
        key = _key(event.object)
        if event.type == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = event.object
        self._snapshot = None
        self._changed.set()


def _settle(future: asyncio.Future[bool], value: bool) -> None:
    if not future.done():
        future.set_result(value)


class Informers:
    """The process's informers, per (EKS cluster, what is listed); at most `limit` at once,
    each stopped after `idle_stop` seconds unread, all of a cluster resynced when the cache is
    told we changed it."""

    def __init__(self, clock: Callable[[], float], idle_stop: float = 300.0,
                 limit: int = 16) -> None:
        self.clock, self.idle_stop, self.limit = clock, idle_stop, limit
        self.by_key: dict[tuple[Any, ...], Informer] = {}
        self._reaper: asyncio.Task[None] | None = None

    def get(self, eks: str, port: KubePort, api_version: str, kind: str,
            kwargs: dict[str, Any]) -> Informer | None:
        what = informer_key(api_version, kind, kwargs)
        if what is None:
            return None
        found = self.by_key.get((eks, *what))
        if found is None and len(self.by_key) < self.limit:
            found = self.by_key[(eks, *what)] = Informer(
                port, api_version, kind, labels=dict(what[2]) or None, clock=self.clock,
                idle_stop=self.idle_stop)
            self._keep_reaping()
        return found

    def invalidated(self, prefix: tuple[Any, ...]) -> None:
        n = min(len(prefix), 2)
        for (eks, *_), informer in self.by_key.items():
            if ("kube", eks)[:n] == prefix[:n]:
                informer.resync()

    def reap(self) -> int:
        """Stop the informers nobody read lately; how many remain."""
        now = self.clock()
        for key, informer in list(self.by_key.items()):
            if informer.idle(now):
                informer.stop()
                del self.by_key[key]
        return len(self.by_key)

    def close(self) -> None:
        for informer in self.by_key.values():
            informer.stop()
        self.by_key.clear()
        if self._reaper is not None:
            self._reaper.cancel()

    def _keep_reaping(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.ensure_future(self._reap_while_any())

    async def _reap_while_any(self) -> None:
        while self.by_key:
            await asyncio.sleep(self.idle_stop / 2)
            self.reap()


def informer_key(api_version: str, kind: str, kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """Which list calls an informer serves: a whole-cluster list of Nodes or Pods (the fleet
    view's reads), optionally by label; namespaced and field-selected lists stay plain."""
    if (api_version, kind) not in WATCHED or set(kwargs) - {"labels"}:
        return None
    labels = kwargs.get("labels") or {}
    return api_version, kind, tuple(sorted(labels.items()))


WATCHED = {("v1", "Node"), ("v1", "Pod")}
