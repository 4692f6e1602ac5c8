"""A real sandbox cloud (`podplane sandbox` at speed 600: ten virtual minutes a second) and a
`podplane serve` pointed at it, both subprocesses on free ports (tests/served.py), for the
cluster pages."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from tests.browser.conftest import CONSOLE_INDEX, Server
from tests.served import SandboxProcess

# the sandbox adopts it; the server's paced clock and the tests send it to /_sandbox
SECRET = secrets.token_urlsafe(16)
KEYS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
        "PODPLANE_SANDBOX_SECRET": SECRET}


class CloudServer(Server):
    def __init__(self, home: Path, aws_url: str) -> None:
        super().__init__(home, PODPLANE_AWS_ENDPOINT_URL=aws_url, **KEYS)
        self.aws_url = aws_url

    @property
    def control_headers(self) -> dict[str, str]:
        return {"X-Podplane-Sandbox-Secret": SECRET}


def sandbox_and_server(tmp: Path) -> Iterator[CloudServer]:
    if not CONSOLE_INDEX.is_file():
        raise RuntimeError(f"The console is not built ({CONSOLE_INDEX} missing): make console")
    box = SandboxProcess(tmp / "cloud", speed=600, seed=7, env={**os.environ, **KEYS})
    srv = CloudServer(tmp / "cp", box.url)
    try:
        box.start()
        srv.start()
        yield srv
    finally:
        srv.stop()
        box.stop()
