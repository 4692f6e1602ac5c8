"""`podplane agent install kiro|claude-code`: connect an AI agent to podplane's MCP server.

Writes the agent's configuration (domain/agents.py) into a project folder, copies the skills
beside it, and mints a token of the chosen role (viewer unless told otherwise) on this
machine's control plane database, kept in `.podplane/agent-token` (0600, git-ignored) that
`podplane mcp` reads: no secret lands in a file meant to be shared. Existing `.mcp.json` and
`.claude/settings.json` are merged into, never replaced.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from podplane.domain import agents
from podplane.domain.effects import Role
from podplane.mcp.cli import DEFAULT_URL

agent_app = typer.Typer(no_args_is_help=True, help="Connect an AI agent to podplane.")
out = Console()
TOKEN_FILE = ".podplane/agent-token"
GITIGNORE = ".podplane/.gitignore"


@agent_app.command("install")
def install(
    kind: Annotated[str, typer.Argument(help="kiro | claude-code")],
    role: Annotated[Role, typer.Option("--role", help="The agent's token role.")] = Role.VIEWER,
    directory: Annotated[Path, typer.Option("--dir", help="The project folder.")] = Path("."),
    url: Annotated[str, typer.Option("--url", envvar="PODPLANE_URL",
                                     help="The control plane the agent talks to.")] = DEFAULT_URL,
    name: Annotated[str | None, typer.Option("--name", help="The token's name.")] = None,
    home: Annotated[Path | None, typer.Option("--home", help="State folder.")] = None,
) -> None:
    """Write the agent's MCP configuration and skills, with a token of `--role`."""
    if kind not in ("kiro", "claude-code"):
        raise typer.BadParameter("kiro or claude-code", param_hint="KIND")
    which: agents.AgentKind = "kiro" if kind == "kiro" else "claude-code"
    target = directory.resolve()
    token_path = target / TOKEN_FILE
    if token_path.exists():
        out.print(f"[red]{token_path} exists[/red]: revoke that token (`podplane token "
                  "revoke`), delete the file, then install again.")
        raise typer.Exit(1)
    setup = _setup(url, token_path)
    refuse_unsafe_paths(target, [TOKEN_FILE, GITIGNORE, *agents.files(which, setup),
                                 *(f"{agents.skills_dir(which)}/{skill}/SKILL.md"
                                   for skill in setup.skills)])
    secret = _mint(name or f"{kind}-agent-{target.name}", role, home)
    _write_token(token_path, secret)
    written = [_merge_json(target / rel, doc) for rel, doc in agents.files(which, setup).items()]
    copied = _copy_skills(target / agents.skills_dir(which), setup.skills)
    out.print(f"{kind}: wrote {', '.join(str(p.relative_to(target)) for p in written)}; "
              f"{copied} skill(s); a {role.value} token in {TOKEN_FILE}.")
    out.print(f"Runs without asking: {len(setup.read_only)} read-only tool(s); "
              f"asks first: {len(setup.changing)}.")


def _mint(name: str, role: Role, home: Path | None) -> str:
    from podplane.cli.main import _run, _settings
    from podplane.server import local_ctx
    from podplane.services.access import tokens

    async def go() -> str:
        async with local_ctx(_settings(home=home)) as ctx:
            return (await tokens.mint(ctx, name, role)).secret

    return _run(go())


def refuse_unsafe_paths(target: Path, relative: list[str]) -> None:
    """Every file install writes must be a real file inside the project: a symlink a checkout
    planted (anywhere on the way) or a path resolving outside is refused before anything is
    minted or written (issue 34, S9)."""
    for rel in relative:
        path = target
        for part in Path(rel).parts:
            path = path / part
            if path.is_symlink():
                raise typer.BadParameter(f"{path} is a symbolic link; podplane writes only "
                                         f"real files inside {target}.", param_hint="--dir")
        if not path.resolve().is_relative_to(target):
            raise typer.BadParameter(f"{rel} resolves outside {target}.", param_hint="--dir")


def private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)   # also one that was there, wider


def _write_new(path: Path, text: str, mode: int = 0o644) -> None:
    """Written in place, never through a link (O_NOFOLLOW), whatever appeared since the check."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _write_token(path: Path, secret: str) -> None:
    private_folder(path.parent)
    _write_new(path.parent / ".gitignore", "*\n")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")


def _setup(url: str, token_path: Path) -> agents.AgentSetup:
    from podplane.mcp.tools import TOOLS

    found = shutil.which("podplane")
    command = found or sys.executable
    read_only = tuple(t.name for t in TOOLS if not t.effect.mutates)
    changing = tuple(t.name for t in TOOLS if t.effect.mutates)
    skills = tuple(sorted(p.parent.name for p in _skills_source().glob("*/SKILL.md")))
    setup = agents.AgentSetup(command, url, str(token_path), read_only, changing, skills)
    return setup if found else _as_module(setup)


def _as_module(setup: agents.AgentSetup) -> agents.AgentSetup:
    """No `podplane` on PATH: run the module with this interpreter."""
    return agents.AgentSetup(setup.command, setup.url, setup.token_file, setup.read_only,
                             setup.changing, setup.skills, prefix=("-m", "podplane"))


def _skills_source() -> Path:
    """PODPLANE_SKILLS, else the checkout's skills/ (a source install or the container)."""
    given = os.environ.get("PODPLANE_SKILLS")
    return Path(given) if given else Path(__file__).resolve().parents[3] / "skills"


def _copy_skills(into: Path, names: tuple[str, ...]) -> int:
    for skill in names:
        (into / skill).mkdir(parents=True, exist_ok=True)
        _write_new(into / skill / "SKILL.md", (_skills_source() / skill / "SKILL.md").read_text())
    return len(names)


def _merge_json(path: Path, ours: dict[str, Any]) -> Path:
    """Our keys added to what the file holds; lists get our entries appended once."""
    theirs: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_new(path, json.dumps(_merged(theirs, ours), indent=2) + "\n")
    return path


def _merged(theirs: Any, ours: Any) -> Any:
    if isinstance(theirs, dict) and isinstance(ours, dict):
        return {**theirs, **{k: _merged(theirs.get(k), v) for k, v in ours.items()}}
    if isinstance(theirs, list) and isinstance(ours, list):
        return theirs + [v for v in ours if v not in theirs]
    return ours
