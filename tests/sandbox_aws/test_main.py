"""The sandbox process entry: the Kubernetes API factory hook and the env file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from podplane.sandbox.clock import VirtualClock
from podplane.sandbox.contracts import NodeSource
from podplane.sandbox.main import Sandbox


class FakeKube:
    def __init__(self, calls: list[Any], args: tuple[Any, ...]) -> None:
        self.calls, self.args = calls, args
        self.started = asyncio.Event()

    async def start(self) -> None:
        self.calls.append(("start", self.args))
        self.started.set()

    async def stop(self) -> None:
        self.calls.append(("stop",))


async def test_serve_starts_and_stops_the_kubernetes_side(tmp_path: Path) -> None:
    calls: list[Any] = []
    made: list[FakeKube] = []

    def factory(state_dir: Path, clock: VirtualClock, nodes: NodeSource, host: str,
                port: int) -> FakeKube:
        made.append(FakeKube(calls, (state_dir, clock, nodes, host, port)))
        return made[0]

    box = Sandbox(tmp_path, aws_port=0, kube_port=16443, speed=0, kube_factory=factory)
    stop = asyncio.Event()
    task = asyncio.create_task(box.serve(stop))
    while not made:
        await asyncio.sleep(0)
    await made[0].started.wait()
    state_dir, clock, nodes, host, port = calls[0][1]
    assert (state_dir, host, port) == (tmp_path / "sandbox", "127.0.0.1", 16443)
    assert clock is box.clock and nodes.sandbox_nodes() == []
    async with httpx.AsyncClient() as client:
        assert (await client.get(f"{box.aws_url}/_sandbox/clock",
                                  headers=box.control_headers)).json()["speed"] == 0
    stop.set()
    await task
    assert calls[-1] == ("stop",)
    env = (tmp_path / "sandbox" / "env").read_text()
    assert f"export AWS_ENDPOINT_URL={box.aws_url}" in env
    assert "export AWS_DEFAULT_REGION=us-west-2" in env
    assert (tmp_path / "sandbox" / "aws-state.json").exists()
