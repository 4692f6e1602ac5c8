"""Job logs over one WebSocket: lines per second to one client, server memory with 100
concurrent streams, and a slow client that must not grow the server's memory.

    .venv/bin/python bench/job_logs.py [--lines 400000] [--streams 100] [--seconds 8]

The server is a separate process (so its memory is its own): a WebSocket route running the
product's own path after authentication, `services.jobs.stream.LogStream` (one bounded queue
per stream, one reader per pod) sent by `api.routers.jobs.pump`, fed by an in-memory
Kubernetes log source that writes as fast as it is read (4 pods per job, training-like lines).
Figures are printed next to their targets (>= 50,000 lines/s to one client; 100 streams under
100 MB; a slow client's server memory flat) as measured ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fastapi import WebSocket  # noqa: E402  (FastAPI resolves the route's annotations here)

PODS = [f"bench-pod-{i}" for i in range(4)]


class FastLogs:
    """A KubePort's `logs` as fast as it is read: `lines` per pod (0 = endless)."""

    def __init__(self, lines: int) -> None:
        self.lines = lines

    async def logs(self, pod: str, namespace: str, **_: Any) -> AsyncIterator[str]:
        i = 0
        while not self.lines or i < self.lines:
            i += 1
            yield (f"[rank {pod[-1]}] step {i} | loss {2.0 / (1 + i / 1000):.4f} | "
                   f"throughput 1742.0 samples/s | lr 3.0e-04")
            if i % 1000 == 0:
                await asyncio.sleep(0)  # let the other readers and the sender run


def serve(port: int) -> None:
    import uvicorn
    from fastapi import FastAPI

    from podplane.api.routers.jobs import pump
    from podplane.services.jobs.stream import LogStream, StreamOptions

    app = FastAPI()

    @app.websocket("/logs")
    async def logs(ws: WebSocket, lines: int = 0) -> None:
        await ws.accept()
        await pump(ws, LogStream(FastLogs(lines), PODS, StreamOptions(follow=True)))  # type: ignore[arg-type]

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws_max_queue=16)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def one_client(url: str) -> tuple[int, float]:
    from websockets.asyncio.client import connect

    count, start = 0, time.perf_counter()
    async with connect(url, max_size=None) as ws:
        async for raw in ws:
            msg = json.loads(raw)
            if msg["type"] == "lines":
                count += len(msg["lines"])
    return count, time.perf_counter() - start


async def reader(url: str, seconds: float, pause: float, counts: list[int]) -> None:
    """Read for `seconds`, sleeping `pause` between messages (0: as fast as possible)."""
    from websockets.asyncio.client import connect

    async with connect(url, max_size=None, max_queue=4) as ws:
        end = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < end:
            msg = json.loads(await ws.recv())
            n += len(msg.get("lines", []))
            if pause:
                await asyncio.sleep(pause)
        counts.append(n)


class Server:
    """The WebSocket server in its own process, so the memory read is the server's alone."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", str(self.port)],
                                     stderr=self.log)
        self.url = f"ws://127.0.0.1:{self.port}/logs"

    async def __aenter__(self) -> Server:
        for _ in range(400):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.1):
                    return self
            except OSError:
                await asyncio.sleep(0.05)
        raise RuntimeError("the bench server did not start")

    async def __aexit__(self, *_: object) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.log.seek(0)
        # asyncio's notes about readers cancelled at shutdown are expected; anything else not
        for line in self.log.read().splitlines():
            if not line.startswith(("Task was destroyed", "task: <Task")):
                print("server:", line)

    def rss(self) -> float:
        return rss_mb(self.proc.pid)


async def sample(server: Server, seconds: float, times: int, out: list[float]) -> None:
    for _ in range(times):
        await asyncio.sleep(seconds / times)
        out.append(server.rss())


async def main(args: argparse.Namespace) -> None:
    async with Server() as server:
        per_pod = args.lines // len(PODS)
        count, took = await one_client(f"{server.url}?lines={per_pod}")
        rate = count / took
        print(f"one client: {count:,} lines in {took:.2f} s = {rate:,.0f} lines/s "
              f"(target 50,000: ratio {rate / 50_000:.2f})")

    async with Server() as server:
        idle, during, counts = server.rss(), [], []  # type: ignore[var-annotated]
        await asyncio.gather(sample(server, args.seconds, 4, during),
                             *(reader(server.url, args.seconds, 0, counts)
                               for _ in range(args.streams)))
        peak = max(during)
        print(f"{args.streams} concurrent endless streams for {args.seconds:.0f} s: "
              f"{sum(counts) / args.seconds:,.0f} lines/s in all; server RSS peak {peak:.1f} MB "
              f"(idle {idle:.1f} MB: +{peak - idle:.1f} MB for the streams; target < 100 MB: "
              f"{(peak - idle) / 100:.2f} of the budget)")

    async with Server() as server:
        idle, samples, slow = server.rss(), [], []  # type: ignore[var-annotated]
        await asyncio.gather(sample(server, args.seconds, 4, samples),
                             *(reader(server.url, args.seconds, 0.2, slow)
                               for _ in range(args.streams)))
        print(f"{args.streams} slow clients (one message per 0.2 s; writers endless): server "
              f"RSS idle {idle:.1f} -> {' -> '.join(f'{m:.1f}' for m in samples)} MB; growth "
              f"after the buffers filled {samples[-1] - samples[1]:+.1f} MB over the last "
              f"{args.seconds / 2:.0f} s ({sum(slow):,} lines read)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]))
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=400_000)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=8.0)
    asyncio.run(main(parser.parse_args()))
