"""Against a real control plane (uvicorn in a subprocess on a free port): `podplane mcp` over
stdio, and the mounted /mcp/ over a real socket (real SSE streams, not a buffered transport)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from podplane.domain.effects import Role
from podplane.mcp.tools import TOOLS
from podplane.server import local_ctx
from podplane.services.access import tokens
from podplane.settings import Settings
from tests.mcp.conftest import structured
from tests.polling import POLL_SECONDS
from tests.served import free_port

SRC = str(Path(__file__).resolve().parents[2] / "src")
pytestmark = pytest.mark.slow


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODPLANE_")}
    return {**env, "PYTHONPATH": SRC, **extra}


@dataclass(frozen=True)
class Served:
    url: str
    secrets: dict[str, str]


async def _mint(home: Path) -> dict[str, str]:
    async with local_ctx(Settings(home=home)) as ctx:
        return {name: (await tokens.mint(ctx, name, role)).secret
                for name, role in (("agent", Role.OPERATOR), ("boss", Role.ADMIN))}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One control plane for the module: starting a process is the slow part."""
    home = tmp_path_factory.mktemp("stdio") / "home"
    secrets = asyncio.run(_mint(home))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "podplane", "serve", "--port", str(port), "--home", str(home)],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _wait_healthy(url, proc)
        yield Served(url, secrets)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60  # as tests.served.wait_up: a loaded CI machine is slow
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"server exited: {err}")
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(POLL_SECONDS)  # waiting for a process to start, not simulating time
    raise AssertionError("server did not become healthy")


async def test_stdio_lists_and_calls_over_http(served: Served) -> None:
    server_url, secrets = served.url, served.secrets
    boss = {"Authorization": f"Bearer {secrets['boss']}"}
    made = httpx.post(f"{server_url}/api/v1/tokens", json={"name": "ci", "role": "viewer"},
                      headers=boss)
    assert made.status_code == 201  # gives the audit log something to show
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "podplane", "mcp"],
        env=_env(PODPLANE_URL=server_url, PODPLANE_TOKEN=secrets["agent"]),
    )
    async with Client(params, mode="legacy", cache=None) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("audit_list", {"limit": 5})
        refused = await client.call_tool("token_list", {})
    assert listed == {t.name for t in TOOLS if Role.OPERATOR.allows(t.role)}
    assert "token_list" not in listed and "audit_list" in listed
    headers = {"Authorization": f"Bearer {secrets['agent']}"}
    rest = httpx.get(f"{server_url}/api/v1/audit", params={"limit": 5}, headers=headers)
    assert not result.is_error
    rows = rest.json()
    # the refusal came from the control plane, which audited it (face: a bearer over HTTP)
    assert [(a["action"], a["target"], a["result"], a["face"]) for a in rows] == [
        ("token.list", "/api/v1/tokens", "error:forbidden", "api"),
        ("token.create", "token/ci", "ok", "api")]
    assert structured(result)["result"] == rows[1:]
    assert structured(refused)["error"]["code"] == "forbidden"


async def test_stdio_viewer_refused_by_the_server_and_audited_once(served: Served) -> None:
    """`podplane mcp` as a viewer calling mutating tools: each call reaches the control plane,
    which refuses it (403, before reading its arguments) and writes exactly one audit row with
    the face the token authenticated through; nothing else is written."""
    boss = {"Authorization": f"Bearer {served.secrets['boss']}"}
    made = httpx.post(f"{served.url}/api/v1/tokens", json={"name": "watcher", "role": "viewer"},
                      headers=boss)
    assert made.status_code == 201, made.text
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "podplane", "mcp"],
        env=_env(PODPLANE_URL=served.url, PODPLANE_TOKEN=made.json()["token"]),
    )
    calls = [("cluster_create", {"name": "sneaky", "region": "us-west-2"}),
             ("node_reboot", {"cluster": "gpu", "node": "i-0123456789abcdef0"}),
             ("cluster_delete", {"name": "gpu"})]  # a destroy, without confirm
    async with Client(params, mode="legacy", cache=None) as client:
        codes = [structured(await client.call_tool(name, args))["error"]["code"]
                 for name, args in calls]
    assert codes == ["forbidden"] * 3
    rows = httpx.get(f"{served.url}/api/v1/audit", params={"principal": "watcher"},
                     headers=boss).json()
    assert [(a["action"], a["target"], a["result"], a["face"], a["role"])
            for a in reversed(rows)] == [
        ("cluster.create", "/api/v1/clusters", "error:forbidden", "api", "viewer"),
        ("node.reboot", "/api/v1/clusters/gpu/nodes/i-0123456789abcdef0/reboot",
         "error:forbidden", "api", "viewer"),
        ("cluster.delete", "/api/v1/clusters/gpu", "error:forbidden", "api", "viewer")]
    ops = httpx.get(f"{served.url}/api/v1/operations", headers=boss).json()
    assert ops["items"] == []  # refused: nothing started


def test_stdio_refuses_to_start_with_a_bad_token(served: Served) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "podplane", "mcp"], input=b"", capture_output=True, timeout=30,
        env=_env(PODPLANE_URL=served.url, PODPLANE_TOKEN="pp_wrong"),
    )
    assert done.returncode == 1
    assert b"refused the token" in done.stderr


@pytest.mark.parametrize("path", ["/mcp/", "/mcp"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_mounted_face_over_a_real_socket(served: Served, mode: str, path: str) -> None:
    headers = {"Authorization": f"Bearer {served.secrets['agent']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(served.url + path, http_client=http)
        async with Client(transport, mode=mode, cache=None) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            waited = await client.call_tool("operation_wait",
                                            {"operation_id": "op-nope", "timeout": 1})
    assert listed == {t.name for t in TOOLS if Role.OPERATOR.allows(t.role)}
    assert structured(waited)["error"]["code"] == "not_found"
