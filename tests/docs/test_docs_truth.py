"""The countable parts of the docs against the code, so they cannot drift: the MCP catalogue's
size and tool names in docs/mcp.md, the README's command list against the CLI, the rooms table
in docs/architecture.md against src/podplane/services/. No server, no sandbox, no network."""

from __future__ import annotations

import re
from pathlib import Path

import typer

import podplane.services as services
from podplane.cli.main import app
from podplane.domain.effects import Role
from podplane.mcp.server import visible_tools
from tests.diagnostics.test_catalogue import CHARS_PER_TOKEN, catalogue

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 0.05  # the token figure in docs/mcp.md may be 5% off the measured one


def doc(name: str) -> str:
    return (ROOT / name).read_text()


def test_mcp_doc_states_the_tool_count_and_token_figure() -> None:
    text = doc("docs/mcp.md")
    found = re.search(r"(\d+) tools, about ([\d,]+) tokens for an\s+admin", text)
    assert found, "docs/mcp.md no longer states 'N tools, about T tokens for an admin'"
    tools = len(visible_tools(Role.ADMIN))
    tokens = len(catalogue(Role.ADMIN)) // CHARS_PER_TOKEN
    assert int(found[1]) == tools
    assert abs(int(found[2].replace(",", "")) - tokens) <= TOLERANCE * tokens, tokens


def test_every_tool_is_named_in_the_mcp_doc() -> None:
    text = doc("docs/mcp.md")
    missing = [t.name for t in visible_tools(Role.ADMIN) if f"`{t.name}`" not in text]
    assert not missing, f"tools not in docs/mcp.md: {missing}"


def test_the_readme_lists_every_cli_command_and_no_other() -> None:
    commands = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    listed = set(re.findall(r"^podplane ([a-z]+)", doc("README.md"), re.M))
    assert commands == listed, (f"missing: {commands - listed}", f"gone: {listed - commands}")


def test_the_rooms_table_matches_the_services_tree() -> None:
    base = Path(services.__file__).parent  # rooms are its subdirectories; its modules the kernel
    rooms = {p.name for p in base.iterdir() if (p / "__init__.py").exists()}
    listed = set(re.findall(r"^\| `services/(\w+)/` \|", doc("docs/architecture.md"), re.M))
    assert rooms == listed, (f"missing: {rooms - listed}", f"gone: {listed - rooms}")
