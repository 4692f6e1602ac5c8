"""The mutation ledger: one entry per mutating cloud call, so tests can count them."""

from __future__ import annotations

from typing import Any


class Ledger:
    def __init__(self, entries: list[dict[str, Any]] | None = None) -> None:
        self.entries: list[dict[str, Any]] = entries or []

    def record(self, time: float, service: str, action: str, target: str | None,
               client_token: str | None = None, params: dict[str, Any] | None = None) -> None:
        self.entries.append({"time": time, "service": service, "action": action,
                             "target": target, "client_token": client_token,
                             "params": params or {}})

    def query(self, service: str | None = None, action: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.entries
                if (not service or e["service"] == service)
                and (not action or e["action"] == action)]
