"""Composition root: settings -> store, engine, adapters, faces."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from podplane.api.app import create_app
from podplane.services import operations
from podplane.services.context import AppState
from podplane.settings import Settings
from podplane.store.db import make_engine, make_sessionmaker, migrate
from podplane.web import pages


def build_state(settings: Settings) -> AppState:
    settings.home.mkdir(parents=True, exist_ok=True)
    url = settings.resolved_database_url
    migrate(url)
    engine = make_engine(url)
    return AppState(settings=settings, sessions=make_sessionmaker(engine),
                    extras={"engine": engine})


def build_app(settings: Settings) -> FastAPI:
    state = build_state(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        ops = await operations.start_engine(state)  # sets state.extras["ops"]
        try:
            yield
        finally:
            await ops.stop()
            await state.extras["engine"].dispose()

    app = create_app(state, lifespan=lifespan)
    app.include_router(pages.router)
    return app
