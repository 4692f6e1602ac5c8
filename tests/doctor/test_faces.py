"""`podplane doctor` through its three faces, as a viewer: REST, MCP and the CLI give the same
findings. The stack's identity is the sandbox's default key, which IAM does not know."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from typer.testing import CliRunner

from podplane.cli import app as cli
from podplane.mcp.tools import BY_NAME
from tests.mcp.conftest import mcp_client, structured
from tests.served import serving
from tests.stack import Stack

CHECKS = ["credentials", "region", "service_linked_role", "permissions", "quota"]
QUERY = {"instance_type": "ml.g5.8xlarge", "count": 2}


def _shape(report: dict[str, Any]) -> None:
    assert report["status"] in ("ok", "warn", "fail")
    assert [f["check"] for f in report["findings"]] == CHECKS
    for f in report["findings"]:
        assert set(f) == {"check", "status", "detail", "fix"}
        assert f["status"] == "ok" or f["fix"], f  # every problem says what to do
    quota = report["findings"][-1]
    assert quota["status"] == "ok" and "room for 2" in quota["detail"]


async def test_rest_face(stack: Stack) -> None:
    async with stack.client("viewer") as viewer:
        r = await viewer.get("/api/v1/doctor", params=QUERY)
        assert r.status_code == 200, r.text
        _shape(r.json())
        bad = await viewer.get("/api/v1/doctor", params={"instance_type": "p5; rm"})
        assert bad.status_code == 422
        assert (await viewer.get("/api/v1/doctor", params={"count": 0})).status_code == 422


async def test_mcp_face(stack: Stack) -> None:
    tool = BY_NAME["doctor_run"]
    assert tool.annotations()["readOnlyHint"] is True
    assert tool.annotations()["destructiveHint"] is False
    async with mcp_client(stack.app, stack.tokens["viewer"]) as agent:
        _shape(structured(await agent.call_tool("doctor_run", QUERY))["result"])


@pytest.fixture
async def served(stack: Stack) -> AsyncIterator[str]:
    async with serving(stack.app) as url:
        yield url


async def test_cli_face(stack: Stack, served: str) -> None:
    env = {"PODPLANE_URL": served, "PODPLANE_TOKEN": stack.tokens["viewer"], "COLUMNS": "250"}
    done = await asyncio.to_thread(CliRunner().invoke, cli,
                                   ["doctor", "--type", "ml.g5.8xlarge", "--count", "2"],
                                   env=env)
    assert done.exit_code == 0, done.output  # warnings only: exit 0
    for check in CHECKS:
        assert check in done.output
    assert "podplane doctor: warn" in done.output
    assert "NoSuchEntity" in done.output
