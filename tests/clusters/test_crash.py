"""The CLI against real processes: the sandbox (`podplane sandbox --speed 600`: ten virtual
minutes per real second) and `podplane serve`. (Killing the server at each crash point of
cluster.create is the crash sweep's job: tests/crash/test_sweep.py.)
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.served import ControlPlane, SandboxProcess


class Procs:
    """The sandbox at speed 600 and a control plane pointed at it, both subprocesses."""

    def __init__(self, tmp: Path) -> None:
        secret = secrets.token_urlsafe(16)  # the sandbox adopts it; serve's clock sends it
        base = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                "PODPLANE_SANDBOX_SECRET": secret}
        self.sandbox = SandboxProcess(tmp / "cloud", speed=600, seed=3,
                                      env={**os.environ, **base})
        self.sandbox.start()
        self.cp = ControlPlane(tmp / "cp", {**base,
                                            "PODPLANE_AWS_ENDPOINT_URL": self.sandbox.url})
        self.token = self.cp.token("crash")

    def serve(self, crash_at: str | None) -> None:
        self.cp.start(crash_at)

    @property
    def url(self) -> str:
        return self.cp.url

    def client(self) -> httpx.Client:
        return self.cp.api(self.token, timeout=70)

    def killed(self) -> int:
        code = self.cp.killed()
        self.cp.proc = None
        return code

    def ledger(self, service: str, action: str) -> list[dict[str, Any]]:
        return self.sandbox.ledger(service=service, action=action)

    def stop(self) -> None:
        self.cp.stop()
        self.sandbox.stop()


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    p = Procs(tmp_path)
    yield p
    p.stop()


def cli(procs: Procs, *args: str) -> subprocess.CompletedProcess[str]:
    return procs.cp.run("cluster", *args, PODPLANE_URL=procs.url, PODPLANE_TOKEN=procs.token,
                        COLUMNS="160")


def test_cli_create_with_live_steps_then_unchanged(procs: Procs) -> None:
    procs.serve(None)
    decisions = ["--az", "us-west-2b", "--type", "ml.g5.8xlarge", "--count", "1",
                 "--no-deep-health-checks"]
    made = cli(procs, "create", "gamma", *decisions)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "verify" in made.stdout and "succeeded" in made.stdout
    again = cli(procs, "create", "gamma", *decisions)
    assert again.returncode == 0 and "nothing to do" in again.stdout
    listed = cli(procs, "list")
    assert "gamma" in listed.stdout and "created" in listed.stdout
    refused = cli(procs, "create", "big", "--az", "us-west-2a", "--type", "ml.p5.48xlarge",
                  "--count", "40")
    assert refused.returncode == 1 and "quota_exceeded" in refused.stderr
