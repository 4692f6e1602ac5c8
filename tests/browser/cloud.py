"""A real sandbox cloud (`podplane sandbox` at speed 600: ten virtual minutes a second) and a
`podplane serve` pointed at it, both subprocesses on free ports, for the cluster pages."""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.browser.conftest import CONSOLE_INDEX, REPO, Server, _free_port

# the sandbox adopts it; the server's paced clock and the tests send it to /_sandbox
SECRET = secrets.token_urlsafe(16)


@dataclass
class CloudServer(Server):
    aws_url: str = ""

    @property
    def env(self) -> dict[str, str]:
        return {**super().env, "PODPLANE_AWS_ENDPOINT_URL": self.aws_url,
                "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                "PODPLANE_SANDBOX_SECRET": SECRET}

    @property
    def control_headers(self) -> dict[str, str]:
        return {"X-Podplane-Sandbox-Secret": SECRET}


def _wait_up(url: str, proc: subprocess.Popen[bytes], log: Path, seconds: float = 60) -> None:
    # The one real-time wait: a child process binding its port, bounded.
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"podplane sandbox exited early:\n{log.read_text()}")
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("podplane sandbox did not come up in time")


def sandbox_and_server(tmp: Path) -> Iterator[CloudServer]:
    aws_port, kube_port = _free_port(), _free_port()
    cloud_home = tmp / "cloud"
    cloud_home.mkdir(parents=True)
    log = cloud_home / "sandbox.log"
    env = {**CloudServer(home=tmp).env, "PODPLANE_HOME": str(cloud_home)}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "podplane", "sandbox", "--aws-port", str(aws_port),
             "--kube-port", str(kube_port), "--speed", "600", "--seed", "7"],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    try:
        aws_url = f"http://127.0.0.1:{aws_port}"
        _wait_up(f"{aws_url}/_sandbox/clock", proc, log)
        srv = CloudServer(home=tmp / "cp", aws_url=aws_url)
        yield from _serve(srv)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _serve(srv: CloudServer) -> Iterator[CloudServer]:
    if not CONSOLE_INDEX.is_file():
        raise RuntimeError(f"The console is not built ({CONSOLE_INDEX} missing): make console")
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()
