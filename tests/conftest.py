"""Shared fixtures: a real app on a real database (SQLite, and PostgreSQL when configured).

The suite runs in parallel (pytest-xdist, `make test`: `--dist loadfile`, so a module's
module-scoped stack starts once): every fixture is per test, module or worker session in its
own tmp dir, PostgreSQL databases get unique names, ports come from `tests.served.free_port`
(a block per worker), and each worker has its own PODPLANE_HOME.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from podplane.bootstrap import build_app
from podplane.domain.effects import Role
from podplane.domain.principal import SYSTEM
from podplane.services.access import tokens
from podplane.services.context import Ctx
from podplane.settings import Settings

PG_URL = os.environ.get("PODPLANE_TEST_POSTGRES_URL")
# The sandbox's virtual clock, not ours, decides when the cloud changes: keep no observation
# longer than its read (single flight only); tests/perf drives retention with its own clock.
os.environ.setdefault("PODPLANE_OBSERVE_SECONDS", "0")
pytest_plugins = [
    "tests.stack",  # the `stack` fixture: sandbox + control plane in one process
    "tests.plugins.measure",  # per-module CPU, starts, creates, processes (ADR 0014)
    "tests.plugins.tiers",  # the automatic `e2e` mark
    "tests.plugins.budget",  # a whole run fails above tests/budget.toml
]


# The upstream CRDs the manifest and sandbox tests judge against: a checkout of `shared/` next to
# this repository (its SOURCES.md says where each comes from).
SHARED_CRDS = Path(__file__).resolve().parents[1].parent / "shared" / "crds"
CRD_SETS = ("hyperpod-inference", "karpenter", "keda", "kubeflow-training-operator", "kuberay",
            "lws")


def missing_crds(root: Path = SHARED_CRDS) -> str | None:
    """What is missing of the upstream CRDs under `root`, said in one sentence (None: nothing)."""
    if not root.is_dir():
        return f"the upstream CRDs are missing: no {root}"
    gone = [name for name in CRD_SETS if not (root / name).is_dir()]
    return f"the upstream CRDs are incomplete: {root} has no {', '.join(gone)}" if gone else None


def pytest_configure(config: pytest.Config) -> None:
    """Stop before collecting when the upstream CRDs are not there: one message naming what is
    missing, instead of import errors in every module that reads them."""
    missing = missing_crds()
    if missing:
        raise pytest.UsageError(f"{missing}. The tests judge manifests against them: check out "
                                f"shared/ next to this repository.")


@pytest.fixture(scope="session", autouse=True)
def worker_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A PODPLANE_HOME of this worker's own (its basetemp is per worker), so a CLI or server
    started without one never shares one (or touches the developer's ~/.podplane)."""
    home = tmp_path_factory.mktemp("podplane-home")
    before = os.environ.get("PODPLANE_HOME")
    os.environ["PODPLANE_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("PODPLANE_HOME", None)
    else:
        os.environ["PODPLANE_HOME"] = before


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "db_url" not in metafunc.fixturenames:
        return
    backends = ["sqlite"]
    if metafunc.definition.get_closest_marker("postgres"):
        if PG_URL:
            backends.append("postgres")
        elif os.environ.get("CI"):
            raise RuntimeError("CI must set PODPLANE_TEST_POSTGRES_URL (see .ci/run)")
    metafunc.parametrize("db_url", backends, indirect=True)


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'podplane.db'}"
        return
    yield from _fresh_postgres_db()


def _fresh_postgres_db() -> Iterator[str]:
    import psycopg

    assert PG_URL
    name = f"pp_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = PG_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def fresh_settings(tmp: Path, url: str | None = None) -> Settings:
    return Settings(home=tmp / "home", database_url=url or f"sqlite:///{tmp / 'pp.db'}")


@pytest.fixture
def settings(tmp_path: Path, request: pytest.FixtureRequest) -> Settings:
    url = request.getfixturevalue("db_url") if "db_url" in request.fixturenames else None
    return fresh_settings(tmp_path, url)


async def no_wait(seconds: float) -> None:
    await asyncio.sleep(0)


def backoff_on(app, sleep=no_wait) -> None:  # type: ignore[no-untyped-def]
    """The AWS caller's retry backoff on the test's clock, not the wall clock. An app with no
    sandbox reaches a closed loopback port (cloud_unreachable, retried with backoff): five
    attempts still happen, but the seconds between them are not waited for real (every AWS
    adapter shares this one caller)."""
    app.state.podplane.engine_cloud.aws.eks.aws.sleep = sleep


@pytest.fixture
async def app(settings: Settings):  # type: ignore[no-untyped-def]
    application = build_app(settings)
    async with application.router.lifespan_context(application):
        backoff_on(application)
        yield application


@pytest.fixture
async def anon(app) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:3099") as c:
        yield c


async def mint(app, name: str, role: Role) -> str:  # type: ignore[no-untyped-def]
    ctx = Ctx(principal=SYSTEM, app=app.state.podplane)
    return (await tokens.mint(ctx, name, role)).secret


@pytest.fixture
async def tokens_by_role(app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {r.value: await mint(app, f"t-{r.value}", r) for r in Role}


def client_for(app, token: str | None, **headers: str) -> httpx.AsyncClient:  # type: ignore[no-untyped-def]
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url="http://127.0.0.1:3099", headers=headers)


@pytest.fixture
async def admin(app, tokens_by_role) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    async with client_for(app, tokens_by_role["admin"]) as c:
        yield c
