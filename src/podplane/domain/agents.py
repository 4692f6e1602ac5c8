"""The files that connect an agent to podplane's MCP server: pure renderers.

Two agents are supported, each in its own documented layout:
- Kiro CLI: a local custom agent `.kiro/agents/podplane.json` (fields `mcpServers`, `tools`,
  `allowedTools` with `@server/tool` patterns, `resources` with `skill://` globs; Kiro docs,
  "Agent configuration reference") and the skills under `.kiro/skills/<name>/SKILL.md`.
- Claude Code: the project's `.mcp.json` (`mcpServers` with a stdio command), the skills
  under `.claude/skills/<name>/SKILL.md`, and `.claude/settings.json` whose
  `permissions.allow` lists `mcp__<server>__<tool>` names (Claude Code docs, "Settings" and
  "MCP").
Read-only tools run without asking; every tool that changes something asks the person first.
The token never appears in these files: the server reads it from a file of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

AgentKind = Literal["kiro", "claude-code"]
SERVER = "podplane"
PROMPT = ("You operate GPU clusters on AWS (EKS + SageMaker HyperPod) through podplane's MCP "
          "tools. Read before you act, follow the skills, and before any tool that changes "
          "something, say what it will do and what it costs, then wait for the person to "
          "agree. A tool that destroys something needs confirm=true, which only the person "
          "can give.")


@dataclass(frozen=True)
class AgentSetup:
    command: str                 # how to start `podplane mcp` on this machine
    url: str                     # the control plane the server talks to
    token_file: str              # where the agent's token is kept (0600)
    read_only: tuple[str, ...]   # tools that never change anything
    changing: tuple[str, ...]    # tools that do: left to ask
    skills: tuple[str, ...]      # skill names, each copied to <skills dir>/<name>/SKILL.md
    prefix: tuple[str, ...] = () # arguments before `mcp` (`-m podplane` for an interpreter)


def _server(setup: AgentSetup) -> dict[str, Any]:
    return {"command": setup.command, "args": [*setup.prefix, "mcp"],
            "env": {"PODPLANE_URL": setup.url, "PODPLANE_TOKEN_FILE": setup.token_file}}


def kiro_agent(setup: AgentSetup) -> dict[str, Any]:
    return {
        "name": SERVER,
        "description": "GPU clusters on AWS through podplane (read-only tools run freely; "
                       "changes ask first).",
        "prompt": PROMPT,
        "mcpServers": {SERVER: _server(setup)},
        "tools": [f"@{SERVER}"],
        "allowedTools": [f"@{SERVER}/{t}" for t in setup.read_only],
        "resources": ["skill://.kiro/skills/*/SKILL.md"],
    }


def claude_mcp(setup: AgentSetup) -> dict[str, Any]:
    return {"mcpServers": {SERVER: {"type": "stdio", **_server(setup)}}}


def claude_settings(setup: AgentSetup) -> dict[str, Any]:
    return {"permissions": {"allow": [f"mcp__{SERVER}__{t}" for t in setup.read_only],
                            "ask": [f"mcp__{SERVER}__{t}" for t in setup.changing]}}


def files(kind: AgentKind, setup: AgentSetup) -> dict[str, dict[str, Any]]:
    """Relative path -> JSON document, for the agent `kind`."""
    if kind == "kiro":
        return {".kiro/agents/podplane.json": kiro_agent(setup)}
    return {".mcp.json": claude_mcp(setup), ".claude/settings.json": claude_settings(setup)}


def skills_dir(kind: AgentKind) -> str:
    return ".kiro/skills" if kind == "kiro" else ".claude/skills"
