"""Live logs of a job's pods, multiplexed onto one stream with bounded memory.

One reader per pod follows the pod's log from Kubernetes and puts lines into ONE bounded queue
per stream; the consumer (a WebSocket) takes them in batches. When the consumer is slow the
queue fills, the readers stop reading, and Kubernetes' HTTP stream is no longer drained, so a
slow browser holds at most QUEUE_LINES lines (each cut at MAX_LINE characters) in this
process, however fast the pods write.

Resuming: every batch carries the cursor {pod: lines delivered so far, counted from the start
of the pod's log}; a client that reconnects with it gets each such pod read from its start,
the lines it already has skipped, and nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import PodplaneError
from podplane.domain.jobs.kinds import NAMESPACE

QUEUE_LINES = 512
BATCH_LINES = 512
MAX_LINE = 4096
Shape = dict[str, Any]


@dataclass(frozen=True)
class StreamOptions:
    container: str | None = None
    follow: bool = True
    since_seconds: int | None = None
    tail: int | None = None
    resume: dict[str, int] = field(default_factory=dict)


class LogStream:
    def __init__(self, kube: KubePort, pods: list[str], options: StreamOptions) -> None:
        self.kube, self.pods, self.options = kube, pods, options
        self.queue: asyncio.Queue[tuple[str, int, str | None]] = asyncio.Queue(QUEUE_LINES)
        self.cursor: dict[str, int] = {p: options.resume.get(p, 0) for p in pods}

    async def _read(self, pod: str) -> None:
        """Put the pod's lines (seq = 1-based index in its log) then an end marker."""
        skip = self.options.resume.get(pod)
        opts = self.options
        seq = 0
        try:
            async for line in self.kube.logs(
                    pod, NAMESPACE, container=opts.container, follow=opts.follow,
                    tail_lines=None if skip else opts.tail,
                    since_seconds=None if skip else opts.since_seconds):
                seq += 1
                if skip and seq <= skip:
                    continue
                item = (pod, seq, line[:MAX_LINE])
                try:  # the common case, without a suspension per line
                    self.queue.put_nowait(item)
                except asyncio.QueueFull:
                    await self.queue.put(item)  # the consumer is behind: wait for it
        except PodplaneError as err:  # not started yet, gone, no such container
            await self.queue.put((pod, -1, err.message))
        finally:
            await self.queue.put((pod, 0, None))

    async def batches(self) -> AsyncGenerator[Shape, None]:
        """Messages: {"type": "lines", "lines": [[pod, line], ...], "cursor"}, {"type": "note",
        "pod", "message"} when a pod has no log to read, and a final {"type": "end"}."""
        readers = [asyncio.create_task(self._read(p)) for p in self.pods]
        open_pods = len(readers)
        try:
            while open_pods:
                items = [await self.queue.get()]
                while len(items) < BATCH_LINES and not self.queue.empty():
                    items.append(self.queue.get_nowait())
                lines = []
                for pod, seq, line in items:
                    if line is None:
                        open_pods -= 1
                    elif seq < 0:
                        yield {"type": "note", "pod": pod, "message": line}
                    else:
                        lines.append((pod, line))
                        self.cursor[pod] = seq
                if lines:
                    yield {"type": "lines", "lines": lines, "cursor": dict(self.cursor)}
            yield {"type": "end", "cursor": dict(self.cursor)}
        finally:
            for task in readers:
                task.cancel()
            for task in readers:
                with contextlib.suppress(BaseException):
                    await task
