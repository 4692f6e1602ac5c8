"""Composition root: settings -> store, engine, adapters, faces."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI

from podplane.api.app import create_app
from podplane.cloud.aws.wiring import session_region
from podplane.cloud.virtual_clock import PacedClock
from podplane.cloud.wiring import build_cloud
from podplane.domain.errors import ConfigError
from podplane.mcp import http as mcp_http
from podplane.ops.context import PointHook
from podplane.ops.engine import OpsEngine
from podplane.ops.workflows import Workflow, Workflows
from podplane.services.cloud_access import Cloud, attach_cloud, fence_views
from podplane.services.clusters import create as cluster_create
from podplane.services.clusters import delete as cluster_delete
from podplane.services.clusters import importing as cluster_import
from podplane.services.clusters import reconcile as cluster_reconcile
from podplane.services.clusters.reconcile_watch import drift_watch
from podplane.services.context import AppState
from podplane.services.diagnostics import nccl_steps
from podplane.services.features import workflows as feature_workflows
from podplane.services.groups import workflows as group_workflows
from podplane.services.inference import download_steps
from podplane.services.inference import pool_steps as pool_workflows
from podplane.services.inference import workflows as endpoint_workflows
from podplane.services.jobs import workflows as job_workflows
from podplane.services.nodes import workflows as node_workflows
from podplane.services.spaces import workflows as space_workflows
from podplane.settings import Settings
from podplane.store.db import make_engine, make_sessionmaker, migrate
from podplane.web import docs, pages

SANDBOX_AWS_URL = "http://127.0.0.1:4566"
SANDBOX_REGION = "us-west-2"
# Set to 1 by tests only: load the test kit (podplane-testkit; see
# docs/adr/0004-engine-boundary-and-test-kit.md).
TESTKIT_ENV = "PODPLANE_TEST_WORKFLOWS"
TESTKIT_GROUP = "podplane.testkit"


@dataclass(frozen=True)
class TestKit:
    """What the separately installed test kit adds to one app: its workflows, a hook at the
    engine's named points (crash points), and routes."""

    workflows: Callable[[AppState], list[Workflow]]
    on_point: PointHook | None = None
    routers: tuple[APIRouter, ...] = ()


def build_state(settings: Settings) -> AppState:
    settings.home.mkdir(mode=0o700, parents=True, exist_ok=True)  # tokens, state: owner only
    settings.home.chmod(0o700)  # also when the sandbox (or anyone) made it first, wider
    if settings.backend == "sandbox":
        _point_at_sandbox(settings)
    else:
        _refuse_loopback_endpoint(settings)
    _resolve_region(settings)
    url = settings.resolved_database_url
    migrate(url)
    engine = make_engine(url)
    state = AppState(settings=settings, sessions=make_sessionmaker(engine), db_engine=engine)
    if settings.backend == "sandbox":
        # The engine polls on the sandbox's time, so a 60x sandbox is polled 60x as often.
        state.ops_clock = PacedClock(settings.aws_endpoint_url or SANDBOX_AWS_URL,
                                     settings.sandbox_dir)
    return state


def product_workflows(app: AppState, cloud: Cloud) -> list[Workflow]:
    """Every workflow kind the product runs (each module declares its own)."""
    return [*cluster_create.declare(app), *cluster_import.declare(app),
            *cluster_delete.declare(app), *cluster_reconcile.declare(app),
            *group_workflows.declare(cloud),
            *node_workflows.declare(cloud), *job_workflows.declare(cloud),
            *feature_workflows.declare(cloud), *endpoint_workflows.declare(cloud),
            *pool_workflows.declare(cloud), *download_steps.declare(cloud),
            *nccl_steps.declare(cloud), *space_workflows.declare(cloud)]


def load_testkit() -> TestKit | None:
    """The test kit, only when PODPLANE_TEST_WORKFLOWS=1; found by its entry point, so the
    product never imports it."""
    if os.environ.get(TESTKIT_ENV) != "1":
        return None
    found = list(entry_points(group=TESTKIT_GROUP))
    if not found:
        raise ConfigError(f"{TESTKIT_ENV}=1 but the test kit is not installed.",
                          hint="`make install-test` installs it (pip install -e ./testkit).")
    kit = found[0].load()()
    if not isinstance(kit, TestKit):
        raise ConfigError(f"The {TESTKIT_GROUP} entry point {found[0].value} gave no TestKit.")
    return kit


async def start_engine(state: AppState, cloud: Cloud, kit: TestKit | None) -> OpsEngine:
    """Build this app's engine with this app's workflows, and start its runner."""
    flows = Workflows(product_workflows(state, cloud))
    if kit is not None:
        flows.add(*kit.workflows(state))
    engine = OpsEngine.build(state.sessions, state.ops_clock, workflows=flows,
                             on_point=kit.on_point if kit else None)
    state.ops = engine
    fence_views(state, engine)
    await engine.start()
    return engine


def _point_at_sandbox(settings: Settings) -> None:
    """The sandbox takes any credentials; real AWS is only reached with PODPLANE_BACKEND=aws."""
    settings.aws_endpoint_url = (settings.aws_endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
                                 or SANDBOX_AWS_URL)
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
    kit = load_testkit()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        cloud = attach_cloud(state, *build_cloud(settings))
        ops = await start_engine(state, cloud, kit)
        try:
            async with mcp_face.running(), drift_watch(state):  # MCP sessions; drift checks
                yield
        finally:
            await ops.stop()
            await cloud.kube.close()
            await state.db_engine.dispose()

    app = create_app(state, lifespan=lifespan)
    for router in kit.routers if kit else ():
        app.include_router(router, prefix="/api/v1")
    app.include_router(pages.router)
    app.include_router(docs.router)
    mcp_face = mcp_http.mount(app)  # streamable HTTP at /mcp/
    return app
