"""Fault injection: rules the emulators consult before acting.

A fault is {id, kind, ...match fields, remaining}. `remaining` (optional) counts how many
times it may still fire; `rate` (0..1, throttling) fires on a seeded fraction of matching calls.
"""

from __future__ import annotations

import random
from typing import Any

KINDS = {
    "insufficient_capacity",   # instance_type?, availability_zone?
    "quota_exceeded",          # instance_type?
    "throttling",              # service?, action?, rate?
    "access_denied",           # service?, action?
    "addon_failure",           # addon_name?, cluster?
    "node_unhealthy",          # cluster, instance_id?, action: reboot|replace (applied at once)
    "cluster_creation_failure",  # cluster?, message?
    "efa_degraded",            # cluster, instance_id, factor (0..1, applied at once)
    "s3_short_pages",          # max_keys: ListObjectsV2 pages hold at most this many keys
}

MATCH_FIELDS = ("service", "action", "instance_type", "availability_zone", "addon_name", "cluster")


class Faults:
    def __init__(self, rng: random.Random, faults: list[dict[str, Any]] | None = None,
                 next_id: int = 1) -> None:
        self.rng = rng
        self.items: list[dict[str, Any]] = faults or []
        self.next_id = next_id

    def add(self, spec: dict[str, Any]) -> dict[str, Any]:
        kind = spec.get("kind")
        if kind not in KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; known: {sorted(KINDS)}")
        fault = {**spec, "id": f"f-{self.next_id}"}
        self.next_id += 1
        self.items.append(fault)
        return fault

    def remove(self, fault_id: str) -> bool:
        before = len(self.items)
        self.items = [f for f in self.items if f["id"] != fault_id]
        return len(self.items) < before

    def fire(self, kind: str, **context: Any) -> dict[str, Any] | None:
        """The first matching fault of `kind` that fires now (and is consumed once), else None."""
        for fault in self.items:
            if fault["kind"] != kind or not _matches(fault, context):
                continue
            rate = fault.get("rate")
            if rate is not None and self.rng.random() >= float(rate):
                continue
            if "remaining" in fault:
                fault["remaining"] -= 1
                if fault["remaining"] <= 0:
                    self.items.remove(fault)
            return fault
        return None


def _matches(fault: dict[str, Any], context: dict[str, Any]) -> bool:
    for key in MATCH_FIELDS:
        want = fault.get(key)
        if want is not None and context.get(key) != want:
            return False
    return True
