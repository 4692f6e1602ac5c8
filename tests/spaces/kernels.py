"""Talking to a Jupyter kernel over its WebSocket as JupyterLab does (Jupyter Server's JSON wire
protocol, messaging spec 5.3): the sandbox's tests and podplane's gateway tests share it."""

from __future__ import annotations

import asyncio
import json
from typing import Any


def execute(code: str, session: str = "s1") -> str:
    return json.dumps({"channel": "shell", "content": {"code": code, "silent": False},
                       "header": {"msg_id": f"m-{len(code)}", "msg_type": "execute_request",
                                  "session": session, "username": "u", "version": "5.3"},
                       "parent_header": {}, "metadata": {}})


async def replies_to(socket: Any, code: str) -> list[dict[str, Any]]:
    """Every message the kernel sends for one execute_request, up to its idle status."""
    await socket.send(execute(code))
    got: list[dict[str, Any]] = []
    while not got or got[-1]["header"]["msg_type"] != "status" or \
            got[-1]["content"]["execution_state"] != "idle":
        got.append(json.loads(await asyncio.wait_for(socket.recv(), 10)))
    return got
