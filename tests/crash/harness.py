"""The crash sweep's harness: one sandbox for the whole sweep, a control plane process that is
SIGKILLed at each new crash point of an operation and restarted until the operation ends.

The sandbox runs in the test process (its clock sped up, so the served engine's paced sleeps
cost little real time); only the control plane is restarted.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import httpx

from podplane_testkit.crash import SWEEP_ENV, swept
from tests.served import ControlPlane, wait_up
from tests.stack import SandboxThread

TERMINAL = ("succeeded", "failed", "cancelled")
# Ledger actions that change the cloud: each (action, what it names) must appear once per
# operation, however often the operation was killed and resumed.
MUTATING = ("Create", "Allocate", "Run", "Batch", "Update", "Delete", "Attach", "Associate",
            "Authorize", "Put", "Tag", "Add")
# Re-asserting these with the same values is how a resumed step re-ensures a property; AWS
# answers the repeat with no change (EC2 ModifyVpcAttribute, S3 PutBucket* are idempotent).
REPEATABLE = ("PutBucketPolicy", "PutBucketTagging", "PutObject", "PutRolePolicy",
              "PutPublicAccessBlock", "PutBucketEncryption", "PutBucketVersioning",
              "AttachRolePolicy", "TagResource", "AddTags", "CreateTags",
              "PutBucketOwnershipControls", "TagRole")


class SweepCloud:
    """The in-process sandbox with boto3 clients and its ledger."""

    def __init__(self, home: Path, speed: float) -> None:
        self.sandbox = SandboxThread(home)
        self.url = self.sandbox.box.aws_url
        self.headers = self.sandbox.box.control_headers
        httpx.put(f"{self.url}/_sandbox/clock/speed", json={"speed": speed}, timeout=120,
                  headers=self.headers).raise_for_status()

    def aws(self, service: str) -> Any:
        return boto3.client(service, endpoint_url=self.url, region_name="us-west-2",
                            aws_access_key_id="test", aws_secret_access_key="test")

    def ledger(self) -> list[dict[str, Any]]:
        r = httpx.get(f"{self.url}/_sandbox/ledger", headers=self.headers, timeout=120)
        r.raise_for_status()
        return list(r.json())

    def stop(self) -> None:
        self.sandbox.stop()


class Forked:
    """A `podplane serve` forked by the warm parent (podplane_testkit.warm), with the part of
    subprocess.Popen's interface the served harness uses."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid, self.args = pid, args
        self.returncode: int | None = None
        self.ended = threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class WarmParent:
    """One process that imported the control plane once and forks a server per start (a
    restart then costs a fork, not the imports: most of a start, measured with py-spy)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "podplane_testkit.warm"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.child: Forked | None = None

    def start(self, args: list[str], env: dict[str, str], log: Path) -> Forked:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"args": args, "env": env, "log": str(log)}) + "\n")
        self.proc.stdin.flush()
        child = Forked(int(json.loads(self.proc.stdout.readline())["pid"]), args)
        threading.Thread(target=self._reap, args=(child,), daemon=True).start()
        return child

    def _reap(self, child: Forked) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        child.returncode = int(json.loads(line)["exit"]) if line else -signal.SIGKILL
        child.ended.set()

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(60)


class SweepServer(ControlPlane):
    """`podplane serve` with the test kit; `start_sweeping(file)` arms the sweep crash hook."""

    warm: WarmParent | None = None

    def close(self) -> None:
        self.stop()
        if self.warm is not None:
            self.warm.stop()
            self.warm = None

    def start_sweeping(self, points: Path | None) -> bool:
        """Serve; False when a crash point killed it before it answered (a resumed operation
        can reach its next point while the server is still starting)."""
        self.home.mkdir(parents=True, exist_ok=True)
        env = {**self.env, "PODPLANE_TEST_WORKFLOWS": "1"}
        if points is not None:
            env[SWEEP_ENV] = str(points)
        args = ["serve", "--host", "127.0.0.1", "--port", str(self.port)]
        if self.warm is None:
            self.warm = WarmParent(self.env)
        self.proc = self.warm.start(args, env, self.log)  # type: ignore[assignment]
        try:
            wait_up(f"{self.url}/api/v1/health", self.proc, self.log)
        except RuntimeError:
            if self.proc.poll() != -signal.SIGKILL:
                raise
            return False
        return True


@dataclass
class SweepResult:
    kind: str
    op: dict[str, Any]
    points: list[str]
    kills: int
    seconds: float
    ledger: list[dict[str, Any]]
    checks: list[str] = field(default_factory=list)
    quiet: list[str] = field(default_factory=list)  # steps that record no phase


Start = Callable[[httpx.Client, str], httpx.Response]


def sweep(server: SweepServer, cloud: SweepCloud, kind: str, start: Start, token: str,
          points_file: Path, max_kills: int = 120) -> SweepResult:
    """Start the operation, kill the server at every new crash point it reaches, restart it,
    until the operation ends with no new point; the same Idempotency-Key finds it again when
    a kill beat the response."""
    began, since = time.monotonic(), len(cloud.ledger())
    key, op_id, kills = f"sweep-{kind}", None, 0
    while True:
        op = None
        if server.start_sweeping(points_file):
            with server.api(token, timeout=30) as api:
                if op_id is None:
                    op_id = _start(api, start, key)
                op = until_end(server, api, op_id) if op_id else None
        if op is not None:
            server.stop()
            break
        assert server.proc is not None and server.proc.wait(60) == -signal.SIGKILL, \
            server.log.read_text()[-3000:]
        server.proc = None
        kills += 1
        assert kills <= max_kills, f"{kind}: still finding new crash points after {kills}"
    return SweepResult(kind, op, swept(points_file), kills, time.monotonic() - began,
                       cloud.ledger()[since:])


def _start(api: httpx.Client, start: Start, key: str) -> str | None:
    try:
        r = start(api, key)
    except httpx.TransportError:  # killed before answering: the key finds it after restart
        return None
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


def until_end(server: SweepServer, api: httpx.Client, op_id: str) -> dict[str, Any] | None:
    """The terminal operation, or None when the server died (a crash point fired)."""
    assert server.proc is not None
    while server.proc.poll() is None:
        try:
            op = api.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 2}).json()
        except httpx.TransportError:
            continue
        if op.get("status") in TERMINAL:
            return dict(op)
    return None


def duplicates(entries: list[dict[str, Any]]) -> list[str]:
    """Mutations the cloud saw more than once with the same target and parameters.

    Entries that name nothing (an EC2 call the ledger keeps without target or parameters) and
    S3 (the ledger names every bucket PUT, ?tagging included, CreateBucket) are counted by
    the final-state checks instead.
    """
    def key(e: dict[str, Any]) -> str:
        params = {k: v for k, v in (e.get("params") or {}).items() if k != "ClientToken"}
        return json.dumps([e["service"], e["action"], e["target"], params], sort_keys=True,
                          default=str)

    seen = Counter(key(e) for e in entries
                   if e["action"].startswith(MUTATING) and e["action"] not in REPEATABLE
                   and e["service"] != "s3" and (e["target"] or e.get("params")))
    return [k for k, n in seen.items() if n > 1]


def count(entries: list[dict[str, Any]], service: str, action: str) -> int:
    return sum(1 for e in entries if e["service"] == service and e["action"] == action)
