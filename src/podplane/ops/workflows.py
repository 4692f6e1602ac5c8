"""How a workflow is declared: an ordered list of named async steps, held per app.

A step is a named function `async (ctx: StepContext) -> dict | None`: in practice a method of a
small steps class built with the ports it needs (`GroupSteps(cloud).place`), so each step can be
called alone in a unit test. Each workflow module exposes `declare(...) -> list[Workflow]`; the
composition root puts them in the engine's own `Workflows` (there is no process-global
registry: two apps in one process each run their own).

A step returns an optional dict that is merged into the operation's result. Step names are
persisted when the operation is created; a resumed operation finds its code again by name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from podplane.domain.errors import InvalidInput

if TYPE_CHECKING:
    from podplane.ops.context import StepContext

StepFn = Callable[["StepContext"], Awaitable[dict[str, Any] | None]]
# Undo what must not outlive a cancelled operation (e.g. a running Job): (params, result so far).
CancelFn = Callable[[dict[str, Any], dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Workflow:
    kind: str
    steps: tuple[tuple[str, StepFn], ...]
    # Mutating workflows hold their target: at most one at a time per target.
    mutating: bool = True
    on_cancel: CancelFn | None = None

    def __post_init__(self) -> None:
        names = self.step_names
        if not names or len(set(names)) != len(names):
            raise ValueError(f"workflow {self.kind!r} needs at least one step and unique "
                             "step names")

    @classmethod
    def of(cls, kind: str, *steps: tuple[str, StepFn], mutating: bool = True,
           on_cancel: CancelFn | None = None) -> Workflow:
        """`Workflow.of("node.reboot", ("reboot", s.reboot), ("kubernetes", s.kubernetes))`."""
        return cls(kind, tuple(steps), mutating, on_cancel)

    @property
    def step_names(self) -> list[str]:
        return [name for name, _ in self.steps]

    def step(self, name: str) -> StepFn | None:
        return dict(self.steps).get(name)


class Workflows:
    """One engine's workflows by kind."""

    def __init__(self, flows: Iterable[Workflow] = ()) -> None:
        self._by_kind: dict[str, Workflow] = {}
        self.add(*flows)

    def add(self, *flows: Workflow) -> None:
        for flow in flows:
            if flow.kind in self._by_kind:
                raise ValueError(f"workflow {flow.kind!r} is declared twice")
            self._by_kind[flow.kind] = flow

    def get(self, kind: str) -> Workflow:
        flow = self._by_kind.get(kind)
        if flow is None:
            raise InvalidInput(f"No workflow of kind {kind!r} is registered.")
        return flow

    def kinds(self) -> list[str]:
        return sorted(self._by_kind)

    def __contains__(self, kind: object) -> bool:
        return kind in self._by_kind
