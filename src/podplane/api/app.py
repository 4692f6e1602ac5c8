"""The FastAPI application: REST under /api/v1, MCP at /mcp/, console at /."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI

from podplane import __version__
from podplane.api import problems
from podplane.api.compression import Compression
from podplane.api.hosts import HostCheck, allowed_hosts
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
    pools,
    session,
    space_templates,
    spaces,
    tokens,
)
from podplane.api.spaces_gateway import SpacesGateway
from podplane.services.context import AppState

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]
API_ROUTERS = [health.router, session.router, tokens.router, audit.router, operations.router,
               clusters.router, inspect.router, instance_groups.router, nodes.router,
               doctor.router, jobs.router, features.router, diagnostics.router,
               endpoints.router, diagnostics_nccl.router, pools.router,
               models.router, spaces.router, space_templates.router]


def create_app(state: AppState, lifespan: Lifespan | None = None) -> FastAPI:
    app = FastAPI(
        title="podplane", version=__version__, lifespan=lifespan or _no_lifespan,
        description="Control plane for GPU clusters on AWS (EKS + SageMaker HyperPod).",
        # /api/docs is served by the console face (web.docs) under its CSP, assets local.
        docs_url=None, redoc_url=None,
        # FastAPI's own OpenTelemetry hooks cost ~0.05 ms per request (a provider lookup that
        # reads the environment each time) and podplane exports no traces: off (issue 21).
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    app.state.podplane = state
    problems.install(app)
    # Each router straight onto the app: one more level of included routers is walked (with
    # its version checks) on every request, ~0.1 ms of CPU each (bench/profile_operations.py).
    for router in API_ROUTERS:
        app.include_router(router, prefix="/api/v1")
    app.add_middleware(BodyLimit, max_bytes=state.settings.max_body_bytes)
    # node lists of 1,000 nodes shrink ~20x; event streams (MCP) are never compressed
    app.add_middleware(Compression, minimum_size=1024, compresslevel=5)
    app.add_middleware(HostCheck, allowed=allowed_hosts(state.settings))
    # outermost: a request to a space's own host never reaches podplane's routes
    app.add_middleware(SpacesGateway, state=state)
    return app


@asynccontextmanager
async def _no_lifespan(_: FastAPI) -> AsyncIterator[None]:
    yield
