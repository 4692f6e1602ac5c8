"""SIGKILL the control plane during the eks step and during the hyperpod step, restart it:
the create completes and the cloud saw exactly one EKS and one SageMaker CreateCluster.

Real processes: the sandbox (`podplane sandbox --speed 600`: ten virtual minutes per real
second) and `podplane serve`, killed by the engine's named crash points.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.clusters.helpers import BODY
from tests.ops.test_crash import free_port

SRC = Path(__file__).resolve().parents[2] / "src"


class Procs:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.aws_port, self.kube_port = free_port(), free_port()
        self.aws_url = f"http://127.0.0.1:{self.aws_port}"
        self.secret = secrets.token_urlsafe(16)  # the sandbox adopts it; serve's clock sends it
        base = {**os.environ, "PYTHONPATH": str(SRC), "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "PODPLANE_SANDBOX_SECRET": self.secret}
        base.pop("PODPLANE_CRASH_AT", None)
        self.cloud_env = {**base, "PODPLANE_HOME": str(tmp / "cloud")}
        self.cp_env = {**base, "PODPLANE_HOME": str(tmp / "cp"),
                       "PODPLANE_AWS_ENDPOINT_URL": self.aws_url}
        self.sandbox = self._spawn(["sandbox", "--aws-port", str(self.aws_port), "--kube-port",
                                    str(self.kube_port), "--speed", "600", "--seed", "3"],
                                   self.cloud_env, "sandbox.log")
        self._until_up(f"{self.aws_url}/_sandbox/clock", self.sandbox, "sandbox.log")
        self.token = subprocess.run(
            [sys.executable, "-m", "podplane", "token", "create", "--name", "crash",
             "--role", "admin"], env=self.cp_env, capture_output=True, text=True, check=True,
            timeout=60).stdout.strip()
        self.server: subprocess.Popen[bytes] | None = None
        self.port = 0

    def _spawn(self, args: list[str], env: dict[str, str], log: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", "podplane", *args], env=env,
                                stdout=subprocess.DEVNULL,
                                stderr=open(self.tmp / log, "ab"))  # noqa: SIM115

    def _until_up(self, url: str, proc: subprocess.Popen[bytes], log: str) -> None:
        for _ in range(600):
            assert proc.poll() is None, (self.tmp / log).read_text()
            try:
                if httpx.get(url, timeout=1).status_code < 500:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError(f"{url} did not come up")

    def serve(self, crash_at: str | None) -> None:
        env = dict(self.cp_env)
        if crash_at:
            env["PODPLANE_CRASH_AT"] = crash_at
        self.port = free_port()
        self.server = self._spawn(["serve", "--port", str(self.port)], env, "server.log")
        self._until_up(f"{self.url}/api/v1/health", self.server, "server.log")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=70,
                            headers={"Authorization": f"Bearer {self.token}"})

    def killed(self) -> int:
        assert self.server is not None
        return self.server.wait(timeout=120)

    def ledger(self, service: str, action: str) -> list[dict[str, Any]]:
        r = httpx.get(f"{self.aws_url}/_sandbox/ledger",
                      params={"service": service, "action": action},
                      headers={"X-Podplane-Sandbox-Secret": self.secret})
        return list(r.json())

    def stop(self) -> None:
        for proc in (self.server, self.sandbox):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    p = Procs(tmp_path)
    yield p
    p.stop()


def test_sigkill_during_eks_and_hyperpod_then_complete(procs: Procs) -> None:
    body = {**BODY, "name": "crashy", "deep_health_checks": False}
    procs.serve("eks:submitted")
    with procs.client() as api:
        try:
            op_id = api.post("/api/v1/clusters", json=body,
                             headers={"Idempotency-Key": "crash-1"}).json()["id"]
        except httpx.TransportError:
            op_id = None
    assert procs.killed() == -signal.SIGKILL
    assert len(procs.ledger("eks", "CreateCluster")) == 1

    procs.serve("hyperpod:submitted")
    with procs.client() as api:
        if op_id is None:
            op_id = api.post("/api/v1/clusters", json=body,
                             headers={"Idempotency-Key": "crash-1"}).json()["id"]
    assert procs.killed() == -signal.SIGKILL
    assert len(procs.ledger("sagemaker", "CreateCluster")) == 1

    procs.serve(None)
    with procs.client() as api:
        for _ in range(30):
            op = api.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 20}).json()
            if op["status"] in ("succeeded", "failed"):
                break
        assert op["status"] == "succeeded", op["steps"]
        eks_step = next(s for s in op["steps"] if s["name"] == "eks")
        assert eks_step["attempt"] == 1
    assert len(procs.ledger("eks", "CreateCluster")) == 1
    assert len(procs.ledger("sagemaker", "CreateCluster")) == 1


def cli(procs: Procs, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**procs.cp_env, "PODPLANE_URL": procs.url, "PODPLANE_TOKEN": procs.token,
           "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "podplane", "cluster", *args], env=env,
                          capture_output=True, text=True, timeout=120)


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
