"""`podplane agent install`: the files a Kiro CLI or Claude Code agent reads, and the MCP
server started exactly as those files say, against a served control plane.

What is asserted is what the agent would meet: the server the config names starts with the
token file alone, lists a viewer's tools, answers a read and refuses a change; read-only tools
are pre-approved and every changing one asks; the secret is in no shared file; files the
project already had keep their entries."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from podplane.domain.effects import Role
from podplane.mcp.tools import TOOLS
from tests.mcp.conftest import structured
from tests.served import ControlPlane

pytestmark = pytest.mark.slow
SKILLS = Path(__file__).resolve().parents[2] / "skills"
READ_ONLY = {t.name for t in TOOLS if not t.effect.mutates}
CHANGING = {t.name for t in TOOLS if t.effect.mutates}


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    plane = ControlPlane(tmp_path_factory.mktemp("agent") / "home")
    plane.start()
    yield plane
    plane.stop()


def _install(cp: ControlPlane, kind: str, project: Path, *extra: str) -> Any:
    return cp.run("agent", "install", kind, "--dir", str(project), "--url", cp.url, *extra)


def _clean_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODPLANE_")}
    return {**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"), **extra}


async def test_kiro_agent_runs_as_a_viewer_from_its_files(cp: ControlPlane,
                                                         tmp_path: Path) -> None:
    done = _install(cp, "kiro", tmp_path)
    assert done.returncode == 0, done.stderr
    agent = json.loads((tmp_path / ".kiro/agents/podplane.json").read_text())
    assert agent["tools"] == ["@podplane"]
    assert {a.removeprefix("@podplane/") for a in agent["allowedTools"]} == READ_ONLY
    assert agent["resources"] == ["skill://.kiro/skills/*/SKILL.md"]
    copied = {p.parent.name for p in (tmp_path / ".kiro/skills").glob("*/SKILL.md")}
    assert copied == {p.parent.name for p in SKILLS.glob("*/SKILL.md")} and copied
    token_file = tmp_path / ".podplane/agent-token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    secret = token_file.read_text().strip()
    assert secret not in (tmp_path / ".kiro/agents/podplane.json").read_text()

    server = agent["mcpServers"]["podplane"]
    params = StdioServerParameters(command=server["command"], args=server["args"],
                                   env=_clean_env(server["env"]))
    async with Client(params, mode="legacy", cache=None) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        read = await client.call_tool("operation_list", {})
        refused = await client.call_tool("cluster_import", {"name": "x"})
    assert listed == {t.name for t in TOOLS if Role.VIEWER.allows(t.role)}
    assert not read.is_error and structured(read)["result"] is not None
    assert structured(refused)["error"]["code"] == "forbidden"

    again = _install(cp, "kiro", tmp_path)  # the token file is there: nothing overwritten
    assert again.returncode == 1 and "revoke" in again.stdout
    assert token_file.read_text().strip() == secret


def test_claude_code_files_merge_into_what_the_project_has(cp: ControlPlane,
                                                           tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"theirs": {"command": "their-server"}}}))
    (tmp_path / ".claude/settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(ls)"]}, "model": "their-choice"}))
    done = _install(cp, "claude-code", tmp_path, "--role", "operator", "--name", "cc")
    assert done.returncode == 0, done.stderr
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert servers["theirs"] == {"command": "their-server"}
    assert servers["podplane"]["type"] == "stdio"
    assert servers["podplane"]["env"]["PODPLANE_TOKEN_FILE"].endswith(".podplane/agent-token")
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert settings["model"] == "their-choice" and "Bash(ls)" in settings["permissions"]["allow"]
    allowed = {a.removeprefix("mcp__podplane__") for a in settings["permissions"]["allow"]
               if a.startswith("mcp__")}
    asked = {a.removeprefix("mcp__podplane__") for a in settings["permissions"]["ask"]}
    assert allowed == READ_ONLY and asked == CHANGING
    with cp.api(cp.token("checker")) as api:
        assert {t["name"]: t["role"] for t in api.get("/api/v1/tokens").json()}["cc"] == \
            "operator"


def test_a_token_file_others_can_read_is_refused(cp: ControlPlane, tmp_path: Path) -> None:
    loose = tmp_path / "token"
    loose.write_text("secret\n")
    loose.chmod(0o644)
    done = cp.run("mcp", "--url", cp.url, PODPLANE_TOKEN_FILE=str(loose))
    assert done.returncode == 2 and "chmod 600" in done.stderr


def test_an_unknown_agent_is_refused(cp: ControlPlane, tmp_path: Path) -> None:
    done = _install(cp, "vim", tmp_path)
    assert done.returncode == 2 and not (tmp_path / ".podplane").exists()
