"""Turning a REST reply into a tool result an agent can act on.

`result` is always the REST body unchanged (face parity). Operations also get a progress
summary and a hint saying which tool to call next, so an agent never has to guess.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types

from podplane.mcp.rest import Reply
from podplane.mcp.tool import STATUS_TOOL, Tool

TERMINAL = frozenset({"succeeded", "failed", "cancelled"})
FINISHED_STEP = frozenset({"succeeded", "skipped"})


def success(tool: Tool, reply: Reply) -> types.CallToolResult:
    out: dict[str, Any] = {"result": reply.body}
    if is_operation(reply.body):
        out["status_tool"] = STATUS_TOOL
        out["progress"] = progress(reply.body)
        out["next"] = next_hint(reply.body)
    elif tool.effect.mutates:
        out["done"] = True  # nothing to wait for: no change needed, or completed in the call
    return _result(out, is_error=False)


def failure(problem: dict[str, Any]) -> types.CallToolResult:
    return _result({"error": problem}, is_error=True)


def is_operation(body: Any) -> bool:
    return isinstance(body, dict) and {"id", "status", "steps"} <= body.keys()


def progress(op: dict[str, Any]) -> dict[str, Any]:
    steps = [s for s in op.get("steps") or [] if isinstance(s, dict)]
    done = sum(1 for s in steps if s.get("status") in FINISHED_STEP)
    current = _current_step(op, steps)
    out: dict[str, Any] = {
        "status": op.get("status"), "steps_done": done, "steps_total": len(steps),
        "current_step": current.get("name") if current else None,
        "current_phase": current.get("phase") if current else None,
    }
    out["summary"] = _summary(out)
    return out


def next_hint(op: dict[str, Any]) -> dict[str, Any] | None:
    """What to call next: keep waiting, retry the failed step, or nothing (finished)."""
    status = op.get("status")
    if status not in TERMINAL:
        args: dict[str, Any] = {"operation_id": op["id"]}
        if isinstance(op.get("revision"), int):
            args["revision"] = op["revision"]  # wake up on the next change
        return {"tool": STATUS_TOOL, "arguments": args, "poll_after_seconds": 0,
                "why": f"Still {status}. {STATUS_TOOL} blocks up to ~50 s, so call it again now."}
    if status == "failed":
        step = _current_step(op, [s for s in op.get("steps") or [] if isinstance(s, dict)])
        if step:
            return {"tool": "operation_retry_step",
                    "arguments": {"operation_id": op["id"], "step": step.get("name")},
                    "why": "The step failed: read its error and hint, fix the cause, retry it."}
    return None


def _current_step(op: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    if op.get("status") == "failed":
        failed = [s for s in steps if s.get("status") == "failed"]
        if failed:
            return failed[-1]
    return next((s for s in steps if s.get("status") not in FINISHED_STEP), None)


def _summary(p: dict[str, Any]) -> str:
    text = f"{p['status']}: {p['steps_done']}/{p['steps_total']} steps done"
    if p["current_step"] and p["status"] not in ("succeeded",):
        phase = f" ({p['current_phase']})" if p["current_phase"] else ""
        text += f"; {'failed at' if p['status'] == 'failed' else 'at'} {p['current_step']}{phase}"
    return text


def _result(payload: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    text = json.dumps(payload, default=str, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=payload, is_error=is_error,
    )
