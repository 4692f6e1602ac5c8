"""Long-running responses: watches (with bookmarks and 410 for compacted versions) and
pod logs (with follow on the virtual clock)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from podplane_sandbox.kube import logs, tables
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.handlers import served
from podplane_sandbox.kube.paths import Target
from podplane_sandbox.kube.selectors import field_selector, label_selector
from podplane_sandbox.kube.store import Event, Store

Obj = dict[str, Any]
BOOKMARK_EVERY = 10.0  # real seconds between idle bookmarks
MAX_WATCH = 1800.0


def _line(obj: Obj) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


class Watch:
    def __init__(self, store: Store, t: Target, q: dict[str, str], want_table: bool) -> None:
        self.store, self.t, self.q, self.want_table = store, t, q, want_table
        labels, fields = (
            label_selector(q.get("labelSelector")),
            field_selector(q.get("fieldSelector")),
        )
        ns = t.namespace if t.rt.namespaced else ""
        self.match: Callable[[Obj], bool] = lambda o: (
            (not ns or o["metadata"].get("namespace") == ns)
            and labels(o["metadata"].get("labels") or {})
            and fields(o)
        )
        self.queue: asyncio.Queue[Event] = asyncio.Queue()
        self.initial: list[Event] = []
        self._start()

    def _start(self) -> None:
        rv = self.q.get("resourceVersion", "")
        key = self.t.rt.key
        self.store.listeners.append(self._listen)
        self.selective = bool(self.q.get("labelSelector") or self.q.get("fieldSelector"))
        self.inside: set[tuple[str, str]] = set()
        if self.selective and rv not in ("", "0"):
            # the state at `rv` is gone; what matches now is the closest we have
            self.inside = {
                (o["metadata"].get("namespace", ""), o["metadata"]["name"])
                for o in self.store.items(key)
                if self.match(o)
            }
        if rv in ("", "0") or self.q.get("sendInitialEvents") == "true":
            self.initial = [
                Event(self.store.rv, "ADDED", key, o)
                for o in self.store.items(key)
                if self.match(o)
            ]
            return
        try:
            since = int(rv)
        except ValueError as exc:
            self.close()
            raise KubeError(400, f"invalid resource version {rv!r}") from exc
        if since < self.store.compacted_rv:
            self.expired = True
        self.initial = [e for e in self.store.history if e.rv > since and e.rt_key == key]

    expired = False

    def _listen(self, event: Event) -> None:
        if event.rt_key == self.t.rt.key:
            self.queue.put_nowait(event)

    def close(self) -> None:
        if self._listen in self.store.listeners:
            self.store.listeners.remove(self._listen)

    def _selected_type(self, event: Event) -> str | None:
        """With a selector, objects entering it are ADDED and leaving it DELETED."""
        meta = event.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        matches = self.match(event.obj)
        if not self.selective:
            return event.type if matches else None
        was_in = key in self.inside
        if matches and event.type != "DELETED":
            self.inside.add(key)
            return event.type if was_in else "ADDED"
        self.inside.discard(key)
        return "DELETED" if was_in or (matches and event.type == "DELETED") else None

    def _encode(self, event: Event) -> bytes | None:
        kind = self._selected_type(event)
        if kind is None:
            return None
        event = Event(event.rv, kind, event.rt_key, event.obj)
        obj = served(self.t.rt, self.t.version, event.obj)
        if self.want_table:
            obj = tables.table(
                self.t.rt,
                self.t.version,
                [obj],
                self.store.clock.now(),
                self.q.get("includeObject", "Metadata"),
                {"resourceVersion": str(event.rv)},
            )
        return _line({"type": event.type, "object": obj})

    def _bookmark(self, initial_end: bool) -> bytes:
        meta: Obj = {"resourceVersion": str(self.store.rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return _line(
            {
                "type": "BOOKMARK",
                "object": {
                    "kind": self.t.rt.kind,
                    "apiVersion": self.t.rt.api_version_for(self.t.version),
                    "metadata": meta,
                },
            }
        )

    async def stream(self) -> AsyncIterator[bytes]:
        try:
            if self.expired:
                yield _line(
                    {
                        "type": "ERROR",
                        "object": KubeError(410, "too old resource version", "Expired").status(),
                    }
                )
                return
            bookmarks = self.q.get("allowWatchBookmarks") in ("true", "1", "True")
            for event in self.initial:
                line = self._encode(event)
                if line:
                    yield line
            if bookmarks:
                yield self._bookmark(initial_end=True)
            timeout = float(self.q.get("timeoutSeconds") or MAX_WATCH)
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                try:
                    event = await asyncio.wait_for(self.queue.get(), min(left, BOOKMARK_EVERY))
                except TimeoutError:
                    if bookmarks:
                        yield self._bookmark(initial_end=False)
                    continue
                line = self._encode(event)
                if line:
                    yield line
        finally:
            self.close()


class PodLogs:
    def __init__(self, store: Store, t: Target, q: dict[str, str]) -> None:
        self.store, self.t, self.q = store, t, q
        pod = store.get(t.rt, t.namespace, t.name)
        containers = pod.get("spec", {}).get("containers") or []
        name = q.get("container") or ""
        if not name:
            default = (pod["metadata"].get("annotations") or {}).get(
                "kubectl.kubernetes.io/default-container"
            )
            if len(containers) == 1 or default:
                name = default or containers[0]["name"]
            else:
                names = " ".join(c["name"] for c in containers)
                raise KubeError(
                    400,
                    f"a container name must be specified for pod {t.name}, "
                    f"choose one of: [{names}]",
                )
        container = next((c for c in containers if c.get("name") == name), None)
        if container is None:
            raise KubeError(400, f"container {name} is not valid for pod {t.name}")
        self.previous = q.get("previous") in ("true", "1")
        if self.previous and logs.run_window(pod, name, previous=True) is None:
            raise KubeError(
                400, f'previous terminated container "{name}" in pod "{t.name}" not found'
            )
        if logs.container_start(pod, name) is None:
            reason = "ContainerCreating" if pod.get("spec", {}).get("nodeName") else "Pending"
            raise KubeError(
                400, f'container "{name}" in pod "{t.name}" is waiting to start: {reason}'
            )
        self.name, self.container = name, container
        self.timestamps = q.get("timestamps") in ("true", "1")

    def _run(self, pod: Obj) -> tuple[float, float | None]:
        return logs.run_window(pod, self.name, self.previous) or (0.0, None)

    def _window_start(self, pod: Obj) -> float:
        start = self._run(pod)[0]
        if self.q.get("sinceSeconds"):
            start = max(start, self.store.clock.now() - float(self.q["sinceSeconds"]))
        return start

    def _end(self, pod: Obj) -> float:
        end = self._run(pod)[1]
        now = self.store.clock.now() + 1e-6
        return min(end + 1e-6, now) if end is not None else now

    def snapshot(self) -> tuple[str, float]:
        pod = self.store.get(self.t.rt, self.t.namespace, self.t.name)
        end = self._end(pod)
        lines = logs.lines_between(
            pod, self.container, self._window_start(pod), end, self._run(pod)[0]
        )
        if self.q.get("tailLines"):
            tail = int(self.q["tailLines"])
            lines = lines[-tail:] if tail > 0 else []
        text = logs.render(lines, self.timestamps)
        if self.q.get("limitBytes"):
            text = text[: int(self.q["limitBytes"])]
        return text, end

    async def follow(self) -> AsyncIterator[bytes]:
        text, emitted_to = self.snapshot()
        if text:
            yield text.encode()
        changed = asyncio.Event()

        def on_event(event: Event) -> None:
            meta = event.obj["metadata"]
            if (
                event.rt_key == "pods"
                and meta["name"] == self.t.name
                and meta.get("namespace") == self.t.namespace
            ):
                changed.set()

        self.store.listeners.append(on_event)
        try:
            while True:
                pod = self.store.find("pods", self.t.namespace, self.t.name)
                if pod is None:
                    return
                end = self._end(pod)
                lines = logs.lines_between(pod, self.container, emitted_to, end, self._run(pod)[0])
                if lines:
                    yield logs.render(lines, self.timestamps).encode()
                emitted_to = max(emitted_to, end)
                if self._run(pod)[1] is not None:
                    return
                await self._wait(changed, next_in=1.0)
        finally:
            self.store.listeners.remove(on_event)

    async def _wait(self, changed: asyncio.Event, next_in: float) -> None:
        changed.clear()
        sleeper = asyncio.ensure_future(self.store.clock.sleep(next_in))
        waiter = asyncio.ensure_future(changed.wait())
        try:
            await asyncio.wait({sleeper, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waiter.cancel()
