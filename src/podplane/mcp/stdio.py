"""`podplane mcp`: the same tools over stdio, calling a running control plane over HTTP.

The token's role is read once at start (tokens never change role; a revoked token gets 401
from REST on the next call), so tools/list and the role check need no extra REST call.
"""

from __future__ import annotations

from typing import Any

import httpx
from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server

from podplane.domain.effects import Role
from podplane.mcp.rest import Caller, remote_client
from podplane.mcp.server import build_server


class StartupError(Exception):
    """The control plane cannot be used with this URL and token; says why."""


async def whoami(url: str, token: str) -> Role:
    try:
        async with remote_client(url, token) as client:
            r = await client.get("/api/v1/session")
    except httpx.HTTPError as e:
        raise StartupError(f"cannot reach the control plane at {url} ({type(e).__name__}); "
                           "is `podplane serve` running? Set PODPLANE_URL or --url.") from None
    if r.status_code == 401:
        raise StartupError("the control plane refused the token (unknown or revoked); "
                           "set PODPLANE_TOKEN or --token to a valid token.")
    if r.status_code != 200:
        raise StartupError(f"unexpected answer from {url}/api/v1/session: HTTP {r.status_code}")
    return Role(r.json()["role"])


async def serve_stdio(url: str, token: str) -> None:
    role = await whoami(url, token)
    caller = Caller(role, lambda: remote_client(url, token))

    async def caller_of(_: ServerRequestContext[Any, Any]) -> Caller:
        return caller

    server = build_server(caller_of)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
