"""An MCP SDK client talking streamable HTTP to the mounted app, in process."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from podplane.mcp.tool import CONFIRM, Tool

BASE = "http://127.0.0.1:3099"
MCP_URL = f"{BASE}/mcp/"


@asynccontextmanager
async def mcp_client(app, token: str, mode: str = "auto") -> AsyncIterator[Client]:  # type: ignore[no-untyped-def]
    """mode: "legacy" (initialize handshake, 2025 protocol) or "auto" (the newest both speak)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE,
                                  headers=headers) as http:
        async with Client(streamable_http_client(MCP_URL, http_client=http), mode=mode,
                          cache=None) as client:
            yield client


def structured(result: Any) -> dict[str, Any]:
    """The tool's structured result; its text content must say the same thing."""
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == json.loads(
        json.dumps(result.structured_content, default=str))
    return result.structured_content  # type: ignore[no-any-return]


SAMPLE = {"desired": "Running", "operation_id": "op-1", "step": "touch", "name": "bot",
          "cluster": "gpu",
          "group": "workers", "node": "i-0123456789abcdef0", "availability_zone": "us-west-2a",
          "instance_type": "ml.g5.8xlarge", "count": 1, "recipe": "pytorch-ddp",
          "instance_group": "workers", "job": "train", "feature": "kuberay",
          "model": "Qwen/Qwen2.5-0.5B-Instruct", "source": "org/tiny", "replicas": 1,
          "prompt": "hi", "endpoint": "chat",
          "nodes": ["i-0123456789abcdef0", "i-0123456789abcdef1"]}


def required_args(tool: Tool) -> dict[str, Any]:
    """The least arguments that pass the tool's own checks (confirmation included)."""
    args = {name: SAMPLE[name] for name, p in tool.params.items() if p.required}
    return {**args, CONFIRM: True} if tool.needs_confirmation else args
