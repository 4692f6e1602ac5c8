"""Running the control plane process."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import uvicorn
from rich.console import Console

from podplane import heap
from podplane.bootstrap import SANDBOX_AWS_URL, build_app, build_state
from podplane.cloud.sandbox_secret import control_headers, sandbox_secret
from podplane.services.access import auth
from podplane.services.context import Ctx
from podplane.settings import Settings

console = Console()


@asynccontextmanager
async def local_ctx(settings: Settings) -> AsyncIterator[Ctx]:
    """The OS user's context on the local database (audited as local:<user>), for CLI
    commands that need no server."""
    state = build_state(settings)
    try:
        yield Ctx(principal=auth.local_principal(), app=state)
    finally:
        await state.db_engine.dispose()


def run(settings: Settings, with_sandbox: bool = False) -> None:
    child = _start_sandbox(settings) if with_sandbox and settings.backend == "sandbox" else None
    try:
        _serve(settings)
    finally:
        if child is not None:
            child.terminate()  # SIGTERM: the sandbox saves its state and exits
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()


def _start_sandbox(settings: Settings, kube_port: int = 6443) -> subprocess.Popen[bytes] | None:
    """Start `podplane sandbox` as a child (unless one already answers) and point AWS at it."""
    url = settings.aws_endpoint_url or SANDBOX_AWS_URL
    settings.aws_endpoint_url = os.environ["AWS_ENDPOINT_URL"] = url
    if _sandbox_ready(url, settings.sandbox_dir):
        return None
    if importlib.util.find_spec("podplane_sandbox") is None:
        raise RuntimeError("no sandbox answers and the podplane-sandbox package is not "
                           "installed: `pip install ./sandbox` from a podplane checkout "
                           "(`make up` does it), or set PODPLANE_BACKEND=aws.")
    src = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    child = subprocess.Popen([sys.executable, "-m", "podplane", "sandbox", "--home",
                              str(settings.home), "--aws-port", str(urlsplit(url).port),
                              "--kube-port", str(kube_port)], env=env)
    deadline = time.monotonic() + 60
    while not _sandbox_ready(url, settings.sandbox_dir):
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise RuntimeError(f"the sandbox did not start on {url}")
        time.sleep(0.2)
    console.print(f"sandbox cloud: {url} (env file: {settings.sandbox_dir / 'env'})")
    return child


def _sandbox_ready(url: str, sandbox_dir: Path) -> bool:
    """A sandbox answers and takes our secret (PODPLANE_SANDBOX_SECRET or its env file)."""
    secret = sandbox_secret(sandbox_dir)  # None until a sandbox starting now writes it
    try:
        status = httpx.get(f"{url}/_sandbox/clock", timeout=1.0,
                           headers=control_headers(secret)).status_code
    except httpx.HTTPError:
        return False
    if status == 401 and secret is not None:
        raise RuntimeError(f"a sandbox answers on {url} but refuses the secret of "
                           f"{sandbox_dir / 'env'}: stop it, or export its "
                           "PODPLANE_SANDBOX_SECRET")
    return status == 200


FIRST_TOKEN_FILE = "admin-token"


def write_first_token(home: Path, secret: str) -> Path:
    """The first admin token goes to a 0600 file, never to the output: a server's output ends
    up in log files, journald or CloudWatch, where others can read it (docs/deploy.md)."""
    path = home / FIRST_TOKEN_FILE
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an older file of that name keeps no wider mode
        os.write(fd, f"{secret}\n".encode())
    finally:
        os.close(fd)
    return path


def _serve(settings: Settings) -> None:
    app = build_app(settings)
    admin = asyncio.run(auth.ensure_admin_token(app.state.podplane))
    url = f"http://{settings.host}:{settings.port}/"
    console.print(f"[bold]podplane[/bold] console: {url}")
    if admin:
        path = write_first_token(settings.home, admin)
        console.print(f"first admin token: in {path} (readable by this user only). Read it "
                      f"once (`cat {path}`), keep it in your password manager, then delete "
                      "the file.", soft_wrap=True, highlight=False)
    heap.tune(settings.young_gc_threshold)
    # The stdlib loop by default, not uvloop: under 200 keep-alive clients uvloop served new
    # requests ahead of finished ones (MagicStack/uvloop#123) and p99 was 10-20x p50, with
    # timeouts; the stdlib loop keeps p99 near 2x p50 for ~7% fewer req/s (ADR 0011).
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info",
                loop=settings.event_loop, proxy_headers=False, access_log=False,
                timeout_graceful_shutdown=5)
