"""Schemathesis over our own OpenAPI document: no generated request may produce a 5xx.

Runs as admin (every route reachable) through the ASGI app in process. The document is read at
import (one case per operation, in every worker's collection); the sandbox and the app under
test are built once, by the module fixture, only where the module runs.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from podplane.bootstrap import build_app
from podplane.cloud.wiring import build_cloud
from podplane.domain.effects import Role
from podplane.services.cloud_access import attach_cloud
from podplane.settings import Settings
from podplane_sandbox.main import Sandbox
from tests.conftest import mint


def openapi_document() -> dict[str, Any]:
    """The server's document, from an app that serves nothing (as web/scripts/dump_openapi.py)."""
    with tempfile.TemporaryDirectory(prefix="podplane-fuzz-doc-") as tmp:
        doc = build_app(Settings(home=Path(tmp), database_url=f"sqlite:///{tmp}/doc.db")).openapi()
    return dict(json.loads(json.dumps(doc)))


@dataclass
class World:
    app: Any = None
    admin: str = ""


WORLD = World()


async def without_lifespan(scope, receive, send):  # type: ignore[no-untyped-def]
    """Schemathesis enters the lifespan on every call; the MCP session manager runs once per
    process, so this harness answers lifespan itself and lets HTTP through (the routes
    under test need no background runner: reads and 202s only)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await WORLD.app(scope, receive, send)


schema = schemathesis.openapi.from_dict(openapi_document())
schema.app = without_lifespan


@pytest.fixture(scope="module", autouse=True)
def fuzz_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The app on a sandbox (time frozen), with the cloud attached as the app's lifespan
    attaches it: routes that read the cloud (clusters, plans, doctor) need it."""
    home = tmp_path_factory.mktemp("fuzz")
    cloud = Sandbox(home / "cloud", aws_port=0, kube_port=0, speed=0, seed=5)
    cloud.start()
    config = Settings(home=home, database_url=f"sqlite:///{home / 'fuzz.db'}",
                      aws_endpoint_url=cloud.aws_url)
    WORLD.app = build_app(config)
    attach_cloud(WORLD.app.state.podplane, *build_cloud(config))
    WORLD.admin = asyncio.run(mint(WORLD.app, "fuzz-admin", Role.ADMIN))
    yield WORLD
    cloud.stop()


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: schemathesis.Case, fuzz_world: World) -> None:
    response = case.call(headers={"Authorization": f"Bearer {fuzz_world.admin}"})
    assert response.status_code < 500, (case.method, case.path, response.text)
    if response.status_code >= 400:
        ctype = response.headers["content-type"]  # a list in schemathesis' transport
        assert "application/problem+json" in ctype
        assert response.json()["code"]
