"""Shared helpers for cluster tests: a create body and waiting for an operation to finish."""

from __future__ import annotations

from typing import Any

import httpx

BODY = {"name": "alpha", "region": "us-west-2", "availability_zone": "us-west-2a",
        "instance_type": "ml.g5.8xlarge", "count": 2, "capacity_type": "on-demand"}


async def wait_done(client: httpx.AsyncClient, op_id: str, rounds: int = 400) -> dict[str, Any]:
    """Long-poll the operation until it is terminal (the engine clock steps the sandbox)."""
    for _ in range(rounds):
        r = await client.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 5})
        op = r.json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return dict(op)
    raise AssertionError(f"operation {op_id} did not finish: {op}")


def step(op: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in op["steps"] if s["name"] == name)
