"""A real sandbox cloud (`podplane sandbox` at speed 600: ten virtual minutes a second) and a
`podplane serve` pointed at it, both subprocesses on free ports (tests/served.py), for the
cluster pages."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def finish(api: Any, op: dict[str, Any]) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        op = api.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20}).json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return op
        assert time.monotonic() < deadline, op


def admin_and_cluster(cloud: CloudServer, name: str) -> str:
    """An admin's token and a one-node cluster made over REST at the sandbox's speed."""
    token = cloud.token("ui-admin", "admin")
    with cloud.api(token) as api:
        r = api.post("/api/v1/clusters", json={
            "name": name, "region": "us-west-2", "availability_zone": "us-west-2a",
            "instance_type": "ml.g5.8xlarge", "count": 1, "capacity_type": "on-demand"})
        assert r.status_code == 202, r.text
        op = finish(api, r.json())
        if op["status"] == "failed":  # a busy machine can starve the sandbox: retry once
            failed = next(s for s in op["steps"] if s["status"] == "failed")
            print("create failed at", failed["name"], failed.get("error"))
            api.post(f"/api/v1/operations/{op['id']}/steps/{failed['name']}/retry")
            op = finish(api, op)
        assert op["status"] == "succeeded", [(s["name"], s["status"], s.get("error"))
                                             for s in op["steps"]]
    return token
