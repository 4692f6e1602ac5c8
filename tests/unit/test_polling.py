"""A test that waits by reading reads at most every 0.2 s, and gives up naming what it waited
for (tests/polling.py, ADR 0014)."""

from __future__ import annotations

import pytest

from tests.polling import POLL_SECONDS, poll


async def test_reads_until_done_sleeping_a_poll_step_between_reads() -> None:
    values, slept = iter([1, 2, 3]), []

    async def read() -> int:
        return next(values)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    assert await poll(read, lambda v: v == 3, "three", sleep=sleep) == 3
    assert slept == [POLL_SECONDS, POLL_SECONDS] and POLL_SECONDS >= 0.2


async def test_gives_up_at_the_deadline_naming_the_wait_and_the_last_value() -> None:
    async def read() -> str:
        return "pending"

    with pytest.raises(AssertionError, match="operation op-1 did not finish: pending"):
        await poll(read, lambda v: v == "done", "operation op-1 did not finish", seconds=0)
