"""Kill -9 at named crash points, restart, and check: exactly one side effect, full history.

These start `python -m podplane serve` as a real process, so real (short) time passes.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from podplane_testkit.crash import ENV as CRASH_ENV
from podplane_testkit.touch import FakeCloud
from tests.crash.harness import WarmParent
from tests.served import SRC, ControlPlane, wait_up


class Server(ControlPlane):
    """A control plane with the test kit, on the test's database, with an admin token; each
    start is a fork of the module's warm parent (podplane_testkit.warm: the imports once)."""

    def __init__(self, home: Path, db_url: str, warm: WarmParent) -> None:
        super().__init__(home, {"PODPLANE_DATABASE_URL": db_url, "PODPLANE_TEST_WORKFLOWS": "1"})
        self.warm = warm
        self.admin = self.token("crash-admin")

    def start(self, crash_at: str | None = None) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        env = {**self.env, **({CRASH_ENV: crash_at} if crash_at else {})}
        args = ["serve", "--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = self.warm.start(args, env, self.log)  # type: ignore[assignment]
        wait_up(f"{self.url}/api/v1/health", self.proc, self.log)

    def client(self) -> httpx.Client:
        return self.api(self.admin)


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmParent]:
    parent = WarmParent({**os.environ, "PYTHONPATH": str(SRC)})
    yield parent
    parent.stop()


@pytest.fixture
def server(tmp_path: Path, db_url: str, warm: WarmParent) -> Iterator[Server]:
    srv = Server(tmp_path / "home", db_url, warm)
    yield srv
    srv.stop()


def start_touch(client: httpx.Client, key: str, name: str) -> dict[str, Any] | None:
    body = {"target": f"test/{name}", "params": {"name": name, "poll": 0.05}}
    try:
        r = client.post("/api/v1/operations/_test", json=body, headers={"Idempotency-Key": key})
    except httpx.TransportError:  # the crash may beat the response; the key finds it again
        return None
    assert r.status_code == 202, r.text
    return r.json()  # type: ignore[no-any-return]


def settle(client: httpx.Client, op_id: str) -> dict[str, Any]:
    for _ in range(20):
        op = client.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 10}).json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return op  # type: ignore[no-any-return]
    raise AssertionError(op)


CASES = [
    ("touch:submitting", 0),  # phase persisted, cloud not called yet
    ("touch:after_call", 1),  # cloud called, "submitted" not persisted
    ("touch:submitted", 1),   # "submitted" persisted, polling not started
]


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize(("crash_at", "touched_before_restart"), CASES)
def test_kill_and_restart_makes_exactly_one_side_effect(
    server: Server, crash_at: str, touched_before_restart: int, db_url: str
) -> None:
    cloud = FakeCloud(server.home / "fake-cloud.jsonl")
    server.start(crash_at=crash_at)
    with server.client() as c:
        start_touch(c, "crash-key", "crashy")
    assert server.killed() == -signal.SIGKILL
    assert len(cloud.entries()) == touched_before_restart

    server.start()
    with server.client() as c:
        again = start_touch(c, "crash-key", "crashy")
        assert again is not None
        op = settle(c, again["id"])
    assert op["status"] == "succeeded", json.dumps(op, indent=1)
    touches = cloud.entries()
    assert len(touches) == 1
    assert touches[0]["client_token"] == op["result"]["client_token"]
    assert op["result"]["touches"] == 1

    touch = next(s for s in op["steps"] if s["name"] == "touch")
    assert touch["attempt"] == 1
    history = [(e["status"], e["phase"], e["message"]) for e in touch["history"]]
    phase_before_crash = crash_at.split(":")[1].replace("after_call", "submitting")
    resumed = next(i for i, h in enumerate(history) if (h[2] or "").startswith("resumed by"))
    assert history[resumed - 1][1] == phase_before_crash
    transitions = [h[1] for h in history if h[0] == "running" and h[2] is None]
    assert transitions == ["submitting", "submitted", "polling"]
    assert history[-1][0] == "succeeded"
    assert all(s["history"] for s in op["steps"])


@pytest.mark.slow
def test_websocket_streams_changes_until_terminal(server: Server) -> None:
    server.start()
    ws_url = f"ws://127.0.0.1:{server.port}/api/v1/operations"
    with server.client() as c:
        op = c.post("/api/v1/operations/_test", json={
            "target": "test/ws", "params": {"name": "ws", "delay": 0.3, "poll": 0.05}}).json()
    frames = []
    with connect(f"{ws_url}/{op['id']}/events",
                 additional_headers={"Authorization": f"Bearer {server.admin}"}) as ws:
        try:
            while True:
                frames.append(json.loads(ws.recv(timeout=30)))
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1000
    revisions = [f["revision"] for f in frames]
    assert revisions == sorted(set(revisions)) and len(frames) >= 2
    assert frames[-1]["status"] == "succeeded"
    assert {f["id"] for f in frames} == {op["id"]}

    with connect(f"{ws_url}/{op['id']}/events",
                 additional_headers={"Authorization": "Bearer pp_wrong"}) as ws:
        with pytest.raises(ConnectionClosed) as bad:
            ws.recv(timeout=30)
    assert bad.value.rcvd is not None and bad.value.rcvd.code == 4401
