"""The official SageMaker HyperPod CLI (`hyp`, PyPI `sagemaker-hyperpod`) as an outside judge.

Its pins (pytest, ruff, click...) conflict with ours, so it lives in its own virtualenv:
`make hyp-venv` (or PODPLANE_HYP=/path/to/hyp). It shells out to `aws eks update-kubeconfig`
and its kubeconfig runs `aws eks get-token`, both from our venv's PyPI AWS CLI. It sends
telemetry to an AWS host on every command: HTTPS_PROXY points at a closed loopback port and
NO_PROXY lets only the sandbox through, so nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.golden import created_stack
from tests.stack import Stack

REPO = Path(__file__).resolve().parents[2]
HYP = os.environ.get("PODPLANE_HYP") or str(REPO / ".venv-hyp" / "bin" / "hyp")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket closes


@dataclass
class Hyp:
    stack: Stack
    home: Path

    @property
    def env(self) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{closed_port()}"
        return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                "HOME": str(self.home), "AWS_ENDPOINT_URL": self.stack.aws_url,
                "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                "AWS_DEFAULT_REGION": "us-west-2", "AWS_REGION": "us-west-2",
                "AWS_CONFIG_FILE": str(self.home / "aws-config"),
                "AWS_SHARED_CREDENTIALS_FILE": str(self.home / "aws-credentials"),
                "HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "https_proxy": proxy,
                "http_proxy": proxy, "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost"}

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert Path(HYP).exists(), f"{HYP} is missing: run `make hyp-venv` (or set PODPLANE_HYP)"
        done = subprocess.run([HYP, *args], env=self.env, capture_output=True, text=True,
                              timeout=300, cwd=self.home)
        if check:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args).stdout)


def hyp_home(stack: Stack, tmp: Path) -> Hyp:
    home = tmp / "hyp-home"
    home.mkdir()
    return Hyp(stack, home)


@pytest.fixture
def hyp(stack: Stack, tmp_path: Path) -> Hyp:
    return hyp_home(stack, tmp_path)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def podplane_cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    """One stack and one cluster created by podplane for a module's tests (creating it is
    most of a test's time: this is a copy of the run's created golden, tests/golden.py); a test
    that starts a job deletes it, so order does not matter."""
    async with created_stack(tmp_path_factory, "hyp") as stack:
        yield stack


@pytest.fixture
def hyp_on(podplane_cluster: Stack, tmp_path: Path) -> Hyp:
    """`hyp` with a home of its own, on the module's created cluster."""
    return hyp_home(podplane_cluster, tmp_path)
