"""Composition root: settings -> store, engine, adapters, faces."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from fastapi import FastAPI

from podplane.api.app import create_app
from podplane.cloud.aws.wiring import session_region
from podplane.cloud.virtual_clock import PacedClock
from podplane.domain.errors import ConfigError
from podplane.mcp import http as mcp_http
from podplane.services import operations
from podplane.services.cloud_access import attach_cloud
from podplane.services.clusters import service as clusters
from podplane.services.context import AppState
from podplane.settings import Settings
from podplane.store.db import make_engine, make_sessionmaker, migrate
from podplane.web import pages

SANDBOX_AWS_URL = "http://127.0.0.1:4566"
SANDBOX_REGION = "us-west-2"


def build_state(settings: Settings) -> AppState:
    settings.home.mkdir(mode=0o700, parents=True, exist_ok=True)  # tokens, state: owner only
    extras: dict[str, object] = {}
    if settings.backend == "sandbox":
        _point_at_sandbox(settings, extras)
    else:
        _refuse_loopback_endpoint(settings)
    _resolve_region(settings)
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


def _refuse_loopback_endpoint(settings: Settings) -> None:
    """With real AWS, a loopback AWS_ENDPOINT_URL (a leftover sandbox env file) would send every
    call, and the EKS token's STS request, to a local process instead of AWS."""
    url = settings.aws_endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
    host = urlsplit(url).hostname if url else None
    if host and (host == "localhost" or _is_loopback(host)):
        raise ConfigError(
            f"PODPLANE_BACKEND=aws but the AWS endpoint is {url}, a loopback address.",
            hint="Unset AWS_ENDPOINT_URL (and PODPLANE_AWS_ENDPOINT_URL), e.g. after sourcing "
                 "the sandbox's env file, or use PODPLANE_BACKEND=sandbox.")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _resolve_region(settings: Settings) -> None:
    """PODPLANE_REGION wins; else the sandbox's own region, or with real AWS the region boto3
    resolves (AWS_REGION, AWS_DEFAULT_REGION, the profile), as the AWS CLI would."""
    if settings.region:
        return
    region = SANDBOX_REGION if settings.backend == "sandbox" else session_region()
    if region is None:
        raise ConfigError("No AWS region is configured.",
                          hint="Set PODPLANE_REGION, AWS_REGION or a region in your AWS "
                               "profile.")
    settings.region = region


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
