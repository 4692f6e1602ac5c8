"""The FastAPI application: REST under /api/v1, MCP at /mcp/, console at /."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import APIRouter, FastAPI
from starlette.middleware.gzip import GZipMiddleware

from podplane import __version__
from podplane.api import problems
from podplane.api.limits import BodyLimit
from podplane.api.routers import (
    audit,
    clusters,
    diagnostics,
    diagnostics_nccl,
    doctor,
    endpoints,
    features,
    health,
    inspect,
    instance_groups,
    jobs,
    models,
    nodes,
    operations,
    session,
    tokens,
)
from podplane.services.context import AppState

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]
API_ROUTERS = [health.router, session.router, tokens.router, audit.router, operations.router,
               clusters.router, inspect.router, instance_groups.router, nodes.router,
               doctor.router, jobs.router, features.router, diagnostics.router,
               endpoints.router, diagnostics_nccl.router, models.router]


def create_app(state: AppState, lifespan: Lifespan | None = None) -> FastAPI:
    app = FastAPI(
        title="podplane", version=__version__, lifespan=lifespan or _no_lifespan,
        description="Control plane for GPU clusters on AWS (EKS + SageMaker HyperPod).",
        # /api/docs is served by the console face (web.docs) under its CSP, assets local.
        docs_url=None, redoc_url=None,
    )
    app.state.podplane = state
    problems.install(app)
    api = APIRouter(prefix="/api/v1")
    for router in API_ROUTERS:
        api.include_router(router)
    app.include_router(api)
    app.add_middleware(BodyLimit, max_bytes=state.settings.max_body_bytes)
    # node lists of 1,000 nodes shrink ~20x; event streams (MCP) are never compressed
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=5)
    return app


@asynccontextmanager
async def _no_lifespan(_: FastAPI) -> AsyncIterator[None]:
    yield
