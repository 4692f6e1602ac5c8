"""Workflows registered by kind: an ordered list of named async steps.

A step returns an optional dict that is merged into the operation's result. Step names are
persisted when the operation is created; a resumed operation finds its code again by name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from podplane.domain.errors import InvalidInput

if TYPE_CHECKING:
    from podplane.ops.context import StepContext

StepFn = Callable[["StepContext"], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True)
class Workflow:
    kind: str
    steps: tuple[tuple[str, StepFn], ...]
    # Mutating workflows hold their target: at most one at a time per target.
    mutating: bool = True

    @property
    def step_names(self) -> list[str]:
        return [name for name, _ in self.steps]

    def step(self, name: str) -> StepFn | None:
        return dict(self.steps).get(name)


_REGISTRY: dict[str, Workflow] = {}


def register(kind: str, steps: Sequence[tuple[str, StepFn]], *, mutating: bool = True) -> Workflow:
    names = [name for name, _ in steps]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"workflow {kind!r} needs at least one step and unique step names")
    flow = Workflow(kind, tuple(steps), mutating)
    _REGISTRY[kind] = flow
    return flow


def get(kind: str) -> Workflow:
    flow = _REGISTRY.get(kind)
    if flow is None:
        raise InvalidInput(f"No workflow of kind {kind!r} is registered.")
    return flow


def kinds() -> list[str]:
    return sorted(_REGISTRY)
