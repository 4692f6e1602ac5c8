"""Running the control plane process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from rich.console import Console

from podplane.bootstrap import build_app, build_state
from podplane.domain.principal import SYSTEM
from podplane.services import auth
from podplane.services.context import Ctx
from podplane.settings import Settings

console = Console()


@asynccontextmanager
async def local_ctx(settings: Settings) -> AsyncIterator[Ctx]:
    """A system context on the local database, for CLI commands that need no server."""
    state = build_state(settings)
    try:
        yield Ctx(principal=SYSTEM, app=state)
    finally:
        await state.extras["engine"].dispose()


def run(settings: Settings, with_sandbox: bool = False) -> None:
    app = build_app(settings)
    admin = asyncio.run(auth.ensure_admin_token(app.state.podplane))
    url = f"http://{settings.host}:{settings.port}/"
    console.print(f"[bold]podplane[/bold] console: {url}")
    if admin:
        console.print(f"admin token (shown once, store it now): [bold]{admin}[/bold]")
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info",
                proxy_headers=False, access_log=False)
