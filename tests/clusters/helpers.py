"""Shared helpers for cluster tests: a create body and waiting for an operation to finish."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

BODY = {"name": "alpha", "region": "us-west-2", "availability_zone": "us-west-2a",
        "instance_type": "ml.g5.8xlarge", "count": 2, "capacity_type": "on-demand"}


async def wait_done(client: httpx.AsyncClient, op_id: str, rounds: int = 3000) -> dict[str, Any]:
    """Read the operation until it is terminal. The engine's own sleeps step the sandbox
    clock; reading (not long-polling) keeps this loop from stepping it too."""
    for _ in range(rounds):
        op = (await client.get(f"/api/v1/operations/{op_id}")).json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return dict(op)
        await asyncio.sleep(0.02)  # let the engine run; virtual time moves only by its sleeps
    raise AssertionError(f"operation {op_id} did not finish: {op}")


def step(op: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in op["steps"] if s["name"] == name)
