"""The `podplane mcp` command (registered on the main CLI)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

DEFAULT_URL = "http://127.0.0.1:3099"


def mcp(
    url: Annotated[str, typer.Option("--url", envvar="PODPLANE_URL",
                                     help="The running control plane.")] = DEFAULT_URL,
    token: Annotated[str, typer.Option(
        "--token", envvar="PODPLANE_TOKEN", show_default=False,
        help="API token (prefer the PODPLANE_TOKEN variable: flags show up in `ps`).")] = "",
) -> None:
    """Serve the MCP tools over stdio, for agents, against a running control plane."""
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
