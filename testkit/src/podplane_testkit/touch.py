"""The test workflow "test.touch" and the fake cloud it mutates.

The fake cloud keeps its state in an append-only JSON-lines ledger on disk, outside the control
plane's memory, so a SIGKILLed server cannot hide a duplicate side effect: every Touch call is
one line.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from podplane.domain.cloud_errors import classify
from podplane.domain.errors import CloudError, InvalidInput
from podplane.ops.context import StepContext
from podplane.ops.mutate import mutate_once
from podplane.ops.workflows import Workflow
from podplane.services.context import AppState

ENV = "PODPLANE_TEST_WORKFLOWS"
LEDGER_ENV = "PODPLANE_TEST_LEDGER"
KIND = "test.touch"


def enabled() -> bool:
    return os.environ.get(ENV) == "1"


def ledger_of(app: AppState) -> Path:
    return Path(os.environ.get(LEDGER_ENV) or app.settings.home / "fake-cloud.jsonl")


class FakeCloud:
    def __init__(self, ledger: Path) -> None:
        self.ledger = ledger
        self._failures: dict[str, int] = {}  # faults served so far, per resource name

    def entries(self) -> list[dict[str, Any]]:
        if not self.ledger.exists():
            return []
        lines = self.ledger.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    async def touch(self, token: str, name: str, now: datetime, delay: float,
                    fail: str | None) -> dict[str, Any]:
        self._maybe_fail(name, fail)
        entry = {"action": "Touch", "client_token": token, "name": name, "at": now.isoformat(),
                 "ready_at": (now + timedelta(seconds=delay)).isoformat()}
        with self.ledger.open("a") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return {"id": token[-8:]}

    async def describe(self, token: str, now: datetime) -> dict[str, Any] | None:
        for entry in self.entries():
            if entry["client_token"] == token:
                ready = now >= datetime.fromisoformat(entry["ready_at"])
                return {"id": token[-8:], "status": "READY" if ready else "CREATING"}
        return None

    def _maybe_fail(self, name: str, fail: str | None) -> None:
        """fail="throttle:N", "denied:N" or "capacity:N": the first N calls for this name
        fail (capacity as AWS words it, classified like any AWS error)."""
        if not fail:
            return
        what, _, count = fail.partition(":")
        served = self._failures.get(name, 0)
        if served >= int(count or "1"):
            return
        self._failures[name] = served + 1
        if what == "throttle":
            raise CloudError("Rate exceeded.", code="ThrottlingException", retryable=True)
        if what == "capacity":
            raise classify("InsufficientCapacity", "We currently do not have sufficient "
                           "capacity in the Availability Zone you requested.", "test.Touch")
        raise CloudError("The fake cloud denied the call.", code="AccessDenied",
                         hint="Grant the permission, then retry the step.")


class TouchSteps:
    def __init__(self, cloud: FakeCloud) -> None:
        self.cloud = cloud

    async def prepare(self, ctx: StepContext) -> dict[str, Any]:
        name = ctx.params.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInput("params.name is required")
        await ctx.phase("validated")
        return {"name": name}

    async def touch(self, ctx: StepContext) -> dict[str, Any]:
        token = ctx.client_token()
        name = str(ctx.params["name"])
        state = await mutate_once(
            ctx, token=token,
            submit=lambda: self.cloud.touch(token, name, ctx.clock.now(),
                                            float(ctx.params.get("delay", 0)),
                                            ctx.params.get("fail")),
            inspect=lambda: self.cloud.describe(token, ctx.clock.now()),
            done=lambda s: s["status"] == "READY",
            poll_every=max(0.01, float(ctx.params.get("poll", 5))), name=name,
        )
        return {"resource_id": state["id"], "client_token": token}

    async def verify(self, ctx: StepContext) -> dict[str, Any]:
        touches = [e for e in self.cloud.entries() if e["name"] == ctx.params["name"]]
        await ctx.phase("checked", touches=len(touches))
        return {"touches": len(touches)}


def workflow(ledger: Path) -> Workflow:
    s = TouchSteps(FakeCloud(ledger))
    return Workflow.of(KIND, ("prepare", s.prepare), ("touch", s.touch), ("verify", s.verify))


def declare(app: AppState) -> list[Workflow]:
    return [workflow(ledger_of(app))]
