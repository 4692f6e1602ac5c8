"""Composition root: settings -> store, engine, adapters, faces."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from podplane.api.app import create_app
from podplane.cloud.virtual_clock import PacedClock
from podplane.mcp import http as mcp_http
from podplane.services import clusters, operations
from podplane.services.cloud_access import attach_cloud
from podplane.services.context import AppState
from podplane.settings import Settings
from podplane.store.db import make_engine, make_sessionmaker, migrate
from podplane.web import pages

SANDBOX_AWS_URL = "http://127.0.0.1:4566"


def build_state(settings: Settings) -> AppState:
    settings.home.mkdir(parents=True, exist_ok=True)
    extras: dict[str, object] = {}
    if settings.backend == "sandbox":
        _point_at_sandbox(settings, extras)
    url = settings.resolved_database_url
    migrate(url)
    engine = make_engine(url)
    extras["engine"] = engine
    return AppState(settings=settings, sessions=make_sessionmaker(engine), extras=extras)


def _point_at_sandbox(settings: Settings, extras: dict[str, object]) -> None:
    """The sandbox takes any credentials; real AWS is only reached with PODPLANE_BACKEND=aws."""
    settings.aws_endpoint_url = (settings.aws_endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
                                 or SANDBOX_AWS_URL)
    # The engine polls on the sandbox's time, so a 60x sandbox is polled 60x as often.
    extras.setdefault("ops_clock", PacedClock(settings.aws_endpoint_url, settings.sandbox_dir))
    for key, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")):
        os.environ.setdefault(key, value)


def build_app(settings: Settings) -> FastAPI:
    state = build_state(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        cloud = attach_cloud(state)
        clusters.register_workflows(state)
        ops = await operations.start_engine(state)  # sets state.extras["ops"]
        try:
            async with mcp_face.running():  # the MCP SDK's session manager
                yield
        finally:
            await ops.stop()
            await cloud.kube.close()
            await state.extras["engine"].dispose()

    app = create_app(state, lifespan=lifespan)
    app.include_router(pages.router)
    mcp_face = mcp_http.mount(app)  # streamable HTTP at /mcp/
    return app
