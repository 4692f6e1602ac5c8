"""A StepContext without an engine: phases, checkpoints and notes are kept in memory, and
sleeping moves a manual clock (no real time passes)."""

from __future__ import annotations

from typing import Any

from podplane.ops.clock import ManualClock
from podplane.ops.context import StepContext


class FakeStep(StepContext):
    def __init__(self, params: dict[str, Any] | None = None, attempt: int = 1) -> None:
        super().__init__(op_id="op-1", kind="test", target="t", params=params or {},
                         step="step", idx=0, attempt=attempt, clock=ManualClock(),
                         phase_name=None)
        self.notes: list[str] = []
        self.phases: list[str] = []
        self.slept = 0.0

    async def phase(self, name: str, /, **checkpoint: Any) -> None:
        self.checkpoint.update(checkpoint)
        self.phase_name = name
        self.phases.append(name)

    async def note(self, message: str, /, **detail: Any) -> None:
        self.notes.append(message)

    async def check_cancel(self) -> None:
        return None

    async def sleep(self, seconds: float) -> None:
        self.slept += seconds
        await self.clock.sleep(seconds)
