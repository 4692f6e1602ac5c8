"""Serving the control plane for tests.

`serving`: the app over real HTTP by uvicorn on a free port, on the test's own loop (for the
CLI face, which talks HTTP; run the CLI in a worker thread).

`ControlPlane` / `SandboxProcess`: `podplane serve` and `podplane sandbox` as real
subprocesses, for the crash, process and browser tests.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from podplane.cloud.sandbox_secret import control_headers, sandbox_secret
from tests.polling import POLL_SECONDS


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="error"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task


# -- real processes: `podplane serve` and `podplane sandbox` as subprocesses ----------------
# The one harness every crash, process and browser test uses: free ports, wait until ready,
# kill -9 (a crash point) or SIGTERM, restart on the same port.

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"


# A port picked here is closed again before the child binds it. Port 0 would let the kernel
# hand the same ephemeral port to another test worker in that gap, so each xdist worker picks
# from its own block below Linux's ephemeral range (ip_local_port_range, 32768-60999), where
# the kernel assigns nothing by itself.
PORT_BLOCK = 500
_next_port = itertools.count()


def free_port() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    # PODPLANE_TEST_PORT_BASE lets suites run side by side (one per worktree) without racing.
    first = int(os.environ.get("PODPLANE_TEST_PORT_BASE", "20000"))
    base = first + (int(worker) if worker.isdigit() else 0) % 24 * PORT_BLOCK
    for _ in range(PORT_BLOCK):
        port = base + next(_next_port) % PORT_BLOCK
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # in use (a child still holds it, or another program)
                continue
            return port
    raise RuntimeError(f"no free port in {base}-{base + PORT_BLOCK - 1}")


def wait_up(url: str, proc: subprocess.Popen[bytes], log: Path, seconds: float = 120,
            headers: dict[str, str] | None = None) -> None:
    """Until `url` answers below 500. The one real-time wait: a child binding its port (slow
    when the parallel suite starts several at once on a small CI machine)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited early:\n{log.read_text()}")
        try:
            if httpx.get(url, timeout=1, headers=headers).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(POLL_SECONDS)
    raise RuntimeError(f"{url} did not come up in time")


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`python -m podplane <args>`, output appended to `log` (a file nobody has to drain)."""
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "podplane", *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT, cwd=REPO)


def terminate(proc: subprocess.Popen[bytes] | None, timeout: float = 20) -> int | None:
    """SIGTERM (an orderly stop), SIGKILL if it hangs; the exit code."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


@dataclass
class ControlPlane:
    """`python -m podplane serve` on a free port (kept across restarts) with its own home."""

    home: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        env = {**os.environ, "PODPLANE_HOME": str(self.home), "PYTHONPATH": str(SRC),
               **self.extra_env}
        env.pop("PODPLANE_CRASH_AT", None)
        return env

    @property
    def log(self) -> Path:
        return self.home / "serve.log"

    def start(self, crash_at: str | None = None) -> None:
        """Serve; with `crash_at` ("<step>:<phase>") the test kit's crash point SIGKILLs it
        there (the kit, and with it the crash points, loads with PODPLANE_TEST_WORKFLOWS=1)."""
        self.home.mkdir(parents=True, exist_ok=True)
        crash = {"PODPLANE_CRASH_AT": crash_at, "PODPLANE_TEST_WORKFLOWS": "1"} if crash_at else {}
        env = {**self.env, **crash}
        self.proc = spawn(["serve", "--host", "127.0.0.1", "--port", str(self.port)], env,
                          self.log)
        wait_up(f"{self.url}/api/v1/health", self.proc, self.log)

    def killed(self, timeout: float = 120) -> int:
        """Wait for the process to end (a crash point kills it); its exit code."""
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self) -> int | None:
        code, self.proc = terminate(self.proc), None
        return code

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """The `podplane` CLI with this control plane's environment."""
        return subprocess.run([sys.executable, "-m", "podplane", *args],
                              env={**self.env, **env}, capture_output=True, text=True,
                              timeout=120)

    def token(self, name: str, role: str = "admin") -> str:
        """A token made the way an operator makes one: `podplane token create`."""
        done = self.run("token", "create", "--name", name, "--role", role)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def api(self, token: str, timeout: float = 60) -> httpx.Client:
        """The REST API as a script would use it (bearer token, face "api")."""
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"},
                            timeout=timeout)


@dataclass
class SandboxProcess:
    """`python -m podplane sandbox` on free ports (kept across restarts)."""

    home: Path
    speed: float = 0
    seed: int = 3
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    aws_port: int = field(default_factory=free_port)
    kube_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.aws_port}"

    @property
    def control_headers(self) -> dict[str, str]:
        """The secret it adopted (PODPLANE_SANDBOX_SECRET) or wrote to its env file."""
        return control_headers(self.env.get("PODPLANE_SANDBOX_SECRET")
                               or sandbox_secret(self.home / "sandbox"))

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        log = self.home / "sandbox.log"
        self.proc = spawn(["sandbox", "--home", str(self.home), "--aws-port", str(self.aws_port),
                           "--kube-port", str(self.kube_port), "--speed", str(self.speed),
                           "--seed", str(self.seed)], {**self.env, "PYTHONPATH": str(SRC)}, log)
        deadline = time.monotonic() + 60
        while True:  # up, and its secret (written at start) is readable
            wait_up(f"{self.url}/_sandbox/clock", self.proc, log)
            if httpx.get(f"{self.url}/_sandbox/clock",
                         headers=self.control_headers).status_code == 200:
                return
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(POLL_SECONDS)

    def stop(self) -> int | None:
        code, self.proc = terminate(self.proc), None
        return code

    def ledger(self, **query: str) -> list[dict[str, Any]]:
        r = httpx.get(f"{self.url}/_sandbox/ledger", params=query,
                      headers=self.control_headers)
        r.raise_for_status()
        return list(r.json())
