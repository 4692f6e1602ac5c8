"""What a step sees: its params, its persisted checkpoint, and how to record progress."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podplane.ops.clock import Clock

if TYPE_CHECKING:
    from podplane.ops.execute import Execution

# Called with (step, point) right after a phase is persisted and at named points such as
# "after_call". The product installs none; the test kit's crash points use it (docs/adr/0004).
PointHook = Callable[[str, str], None]


@dataclass
class StepContext:
    op_id: str
    kind: str
    target: str
    params: dict[str, Any]
    step: str
    idx: int
    attempt: int
    clock: Clock
    # The persisted phase ("submitting", "submitted", "polling", ...) and what came with it.
    phase_name: str | None
    checkpoint: dict[str, Any] = field(default_factory=dict)
    # What the operation's finished steps returned so far (saved with each step).
    results: dict[str, Any] = field(default_factory=dict)
    _run: Execution | None = None

    @property
    def resumed(self) -> bool:
        """True when this step already reached a phase before (a restart or a throttle retry)."""
        return self.phase_name is not None

    def client_token(self, purpose: str = "") -> str:
        """Deterministic per (operation, step, attempt[, purpose]): stable across restarts,
        new when a person retries the step."""
        raw = f"{self.op_id}:{self.step}:{self.attempt}:{purpose}"
        return "pp" + hashlib.sha256(raw.encode()).hexdigest()[:32]

    async def phase(self, name: str, /, **checkpoint: Any) -> None:
        """Persist the phase (and checkpoint values) and commit before returning.

        Call it *before* the cloud call it announces, so a crash leaves a trace to inspect.
        """
        self.checkpoint.update(checkpoint)
        self.phase_name = name
        assert self._run is not None
        await self._run.save_phase(self, name)
        self.crash_point(name)

    async def remember(self, **checkpoint: Any) -> None:
        """Persist checkpoint values without changing the phase (what a poll observed and a
        resumed step must not forget, e.g. that a rebooting node was seen down)."""
        self.checkpoint.update(checkpoint)
        assert self._run is not None
        await self._run.save_checkpoint(self)

    async def note(self, message: str, /, **detail: Any) -> None:
        """Record progress in the step's detail and history (no phase change)."""
        assert self._run is not None
        await self._run.save_note(self, message, detail)

    def crash_point(self, label: str) -> None:
        """A named point the engine's PointHook sees (reliability tests kill the process here)."""
        if self._run is not None:
            self._run.reached(self.step, label)

    async def check_cancel(self) -> None:
        """Raise if someone asked to cancel: the cooperative cancel point."""
        assert self._run is not None
        await self._run.check_cancel()

    async def sleep(self, seconds: float) -> None:
        """Sleep on the engine clock, then honour a pending cancel."""
        await self.clock.sleep(seconds)
        await self.check_cancel()
