"""The `/_sandbox` control API (docs/sandbox.md, "Control API"): clock, faults, ledger, reset, seed,
plus capacity and quota knobs. JSON in, JSON out."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from podplane_sandbox.aws.world import World

Response = tuple[int, dict[str, str], bytes]


class ControlApi:
    def __init__(self, world: World, hyperpod: Any, on_change: Callable[[bool], None],
                 on_reset: Callable[[int], None],
                 before_jump: Callable[[], None] = lambda: None) -> None:
        self.w, self.hyperpod = world, hyperpod
        self.on_change, self.on_reset = on_change, on_reset
        self.before_jump = before_jump  # the Kubernetes controllers finish what is due now

    def handle(self, method: str, path: str, query: str, body: bytes) -> Response:
        try:
            data = json.loads(body) if body.strip() else {}
        except json.JSONDecodeError:
            return _json(400, {"error": "body is not JSON"})
        route = f"{method} {path.rstrip('/')}"
        if route == "POST /_sandbox/clock/advance":
            # Outside the world's lock: the controllers read nodes under it. Without this, what
            # they do in reaction to the last write is stamped before or after the jump as the
            # threads' race falls, and the same steps end differently with the machine's load.
            self.before_jump()
        with self.w.lock:
            try:
                return self._route(route, path, parse_qs(query), data)
            except (ValueError, KeyError, TypeError) as e:
                return _json(400, {"error": str(e)})

    def _route(self, route: str, path: str, query: dict[str, list[str]],
               data: dict[str, Any]) -> Response:
        clock = self.w.clock
        if route == "GET /_sandbox/clock":
            return _json(200, {"now": clock.now(), "speed": clock.speed})
        if route == "POST /_sandbox/clock/advance":
            clock.advance(float(data["seconds"]))
            return self._changed({"now": clock.now(), "speed": clock.speed})
        if route == "PUT /_sandbox/clock/speed":
            clock.set_speed(float(data["speed"]))
            return self._changed({"now": clock.now(), "speed": clock.speed})
        if route == "GET /_sandbox/faults":
            return _json(200, self.w.faults.items)
        if route == "POST /_sandbox/faults":
            return self._changed(self._add_fault(data), status=201)
        if m := re.fullmatch(r"DELETE /_sandbox/faults/([\w-]+)", route):
            self.w.tick()
            if not self.w.faults.remove(m.group(1)):
                return _json(404, {"error": f"no fault {m.group(1)}"})
            self.w.tick()  # e.g. a capacity fault lifted: waiting clusters launch now
            return self._changed({"deleted": m.group(1)})
        if route == "GET /_sandbox/ledger":
            self.w.tick()
            return _json(200, self.w.ledger.query(_one(query, "service"), _one(query, "action")))
        if route == "POST /_sandbox/reset":
            self.on_reset(int(data.get("seed", self.w.seed)))
            return self._changed({"reset": True, "seed": self.w.seed})
        if route == "GET /_sandbox/seed":
            return _json(200, {"seed": self.w.seed})
        if route in ("POST /_sandbox/seed", "PUT /_sandbox/seed"):
            self.on_reset(int(data["seed"]))
            return self._changed({"seed": self.w.seed})
        return self._knobs(route, data) or _json(404, {"error": f"no route {route}"})

    def _knobs(self, route: str, data: dict[str, Any]) -> Response | None:
        cap = self.hyperpod.cap
        if route == "PUT /_sandbox/capacity":
            self.w.tick()  # settle the past before capacity changes the future
            cap.set_capacity(data["instance_type"], data["availability_zone"], int(data["count"]))
            self.w.tick()  # clusters waiting for capacity (continuous provisioning) take it now
            return self._changed(data)
        if route == "PUT /_sandbox/quotas":
            value = data["value"]  # null: no applied value, AWS's default applies
            cap.set_quota(data["instance_type"], None if value is None else int(value))
            return self._changed(data)
        if route == "GET /_sandbox/nodes":
            return _json(200, [n.__dict__ for n in self.hyperpod.sandbox_nodes()])
        return None

    def _add_fault(self, data: dict[str, Any]) -> dict[str, Any]:
        fault = self.w.faults.add(data)
        if fault["kind"] == "node_unhealthy":
            self.w.tick()
            node = self.hyperpod.mark_unhealthy(
                data["cluster"], data.get("instance_id"), data.get("action", "replace"),
                data.get("reason", "GPU health check failed (NVIDIA Xid 79)"))
            fault["applied_to"] = node["InstanceId"]
            self.w.faults.remove(fault["id"])  # one-shot: it has been applied
        if fault["kind"] == "efa_degraded":
            self.hyperpod.degrade_efa(data["cluster"], data["instance_id"],
                                      float(data.get("factor", 0.5)))
            self.w.faults.remove(fault["id"])  # one-shot: it has been applied
        return fault

    def _changed(self, payload: Any, status: int = 200) -> Response:
        self.on_change(False)
        return _json(status, payload)


def _one(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def _json(status: int, payload: Any) -> Response:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()
