"""Progress summaries and next-call hints an agent gets with every operation."""

from __future__ import annotations

from typing import Any

from podplane.mcp.results import next_hint, progress


def op(status: str, *steps: tuple[str, str, str | None]) -> dict[str, Any]:
    return {"id": "op-1", "status": status,
            "steps": [{"name": n, "status": s, "phase": p} for n, s, p in steps]}


def test_running_operation_reports_the_current_step_and_says_wait_again() -> None:
    o = op("running", ("plan", "succeeded", None), ("create-vpc", "running", "polling"),
           ("create-cluster", "pending", None))
    assert progress(o) == {
        "status": "running", "steps_done": 1, "steps_total": 3,
        "current_step": "create-vpc", "current_phase": "polling",
        "summary": "running: 1/3 steps done; at create-vpc (polling)",
    }
    hint = next_hint(o)
    assert hint is not None
    assert (hint["tool"], hint["arguments"], hint["poll_after_seconds"]) == (
        "operation_wait", {"operation_id": "op-1"}, 0)


def test_failed_operation_points_at_the_failed_step_to_retry() -> None:
    o = op("failed", ("plan", "succeeded", None), ("create-vpc", "failed", "submitting"),
           ("create-cluster", "pending", None))
    assert progress(o)["current_step"] == "create-vpc"
    assert progress(o)["summary"] == "failed: 1/3 steps done; failed at create-vpc (submitting)"
    hint = next_hint(o)
    assert hint is not None
    assert (hint["tool"], hint["arguments"]) == (
        "operation_retry_step", {"operation_id": "op-1", "step": "create-vpc"})


def test_finished_operation_needs_no_next_call() -> None:
    done = op("succeeded", ("plan", "succeeded", None), ("apply", "succeeded", None))
    assert progress(done)["summary"] == "succeeded: 2/2 steps done"
    assert progress(done)["current_step"] is None
    assert next_hint(done) is None
    assert next_hint(op("cancelled", ("plan", "cancelled", None))) is None
