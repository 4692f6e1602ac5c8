"""The `podplane mcp` command (registered on the main CLI)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Annotated

import typer

DEFAULT_URL = "http://127.0.0.1:3099"


def mcp(
    url: Annotated[str, typer.Option("--url", envvar="PODPLANE_URL",
                                     help="The running control plane.")] = DEFAULT_URL,
    token: Annotated[str, typer.Option(
        "--token", envvar="PODPLANE_TOKEN", show_default=False,
        help="API token (prefer the PODPLANE_TOKEN variable: flags show up in `ps`).")] = "",
    token_file: Annotated[Path | None, typer.Option(
        "--token-file", envvar="PODPLANE_TOKEN_FILE", show_default=False,
        help="A file holding the token (what `podplane agent install` writes).")] = None,
) -> None:
    """Serve the MCP tools over stdio, for agents, against a running control plane."""
    if not token and token_file is not None:
        token = _read_token(token_file)
    if not token:
        typer.echo("podplane mcp: no token. Set PODPLANE_TOKEN (create one with "
                   "`podplane token create --name my-agent --role viewer`).", err=True)
        raise typer.Exit(2)
    from podplane.mcp.stdio import StartupError, serve_stdio  # heavy: only when serving

    try:
        asyncio.run(serve_stdio(url, token))
    except StartupError as e:
        typer.echo(f"podplane mcp: {e}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        pass


def _read_token(path: Path) -> str:
    """A token file readable by others is refused, as ssh refuses such a key."""
    try:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            typer.echo(f"podplane mcp: {path} is readable by others; chmod 600 it.", err=True)
            raise typer.Exit(2)
        return path.read_text().strip()
    except OSError as e:
        typer.echo(f"podplane mcp: cannot read the token file: {e.strerror}: {path}", err=True)
        raise typer.Exit(2) from None
