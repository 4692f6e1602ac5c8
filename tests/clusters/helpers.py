"""Shared helpers for cluster tests: a create body and waiting for an operation to finish."""

from __future__ import annotations

from typing import Any

import httpx

from tests.polling import poll

TERMINAL = ("succeeded", "failed", "cancelled")
BODY = {"name": "alpha", "region": "us-west-2", "availability_zone": "us-west-2a",
        "instance_type": "ml.g5.8xlarge", "count": 2, "capacity_type": "on-demand"}


async def wait_done(client: httpx.AsyncClient, op_id: str, seconds: float = 120
                    ) -> dict[str, Any]:
    """Read the operation until it is terminal. The engine's own sleeps step the sandbox
    clock; reading (not long-polling) keeps this loop from stepping it too."""

    async def read() -> dict[str, Any]:
        return dict((await client.get(f"/api/v1/operations/{op_id}")).json())

    return await poll(read, lambda op: op["status"] in TERMINAL,
                      f"operation {op_id} did not finish", seconds)


def step(op: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in op["steps"] if s["name"] == name)
