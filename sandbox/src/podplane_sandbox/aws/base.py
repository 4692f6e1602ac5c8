"""What every emulator shares: the world, its slice of state, and output cleaning."""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, cast

from podplane_sandbox.aws.protocol import service_model
from podplane_sandbox.aws.world import World


class Emulator:
    service = ""          # ledger / fault name: "eks", "sagemaker", "service-quotas"
    mutating: frozenset[str] = frozenset()

    def __init__(self, world: World) -> None:
        self.w = world
        world.on_tick(self.tick)

    @property
    def s(self) -> dict[str, Any]:
        return self.w.service_state(self.service)

    def table(self, name: str) -> dict[str, Any]:
        return cast("dict[str, Any]", self.s.setdefault(name, {}))

    def tick(self, now: float) -> None:
        """Apply lifecycle transitions whose deadline has passed."""

    def handles(self, action: str) -> bool:
        """Only real API operations (botocore's model) that we implement; never a helper."""
        return action in _operations(self.service) and hasattr(self, _snake(action))

    def accepts(self, action: str, params: dict[str, Any]) -> bool:
        """Whether this request is ours (else it goes to moto)."""
        return self.handles(action)

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        self.w.check_common_faults(self.service, action)
        result: dict[str, Any] = getattr(self, _snake(action))(params)
        return cast("dict[str, Any]", public(result))


def public(value: Any) -> Any:
    """A deep copy without our private `_fields`."""
    if isinstance(value, dict):
        return {k: public(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [public(v) for v in value]
    return copy.copy(value)


def paginate(items: list[Any], params: dict[str, Any], max_key: str, token_key: str,
             default: int = 100) -> tuple[list[Any], str | None]:
    start = int(params.get(token_key) or 0)
    size = int(params.get(max_key) or default)
    page = items[start:start + size]
    nxt = str(start + size) if start + size < len(items) else None
    return page, nxt


@lru_cache(maxsize=8)
def _operations(service: str) -> frozenset[str]:
    return frozenset(service_model(service).operation_names)


def _snake(action: str) -> str:
    out = []
    for i, ch in enumerate(action):
        if ch.isupper() and i and not action[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
