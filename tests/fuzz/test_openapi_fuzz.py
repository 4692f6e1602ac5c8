"""Schemathesis over our own OpenAPI document: no generated request may produce a 5xx.

Runs as admin (every route reachable) through the ASGI app in process.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from podplane.bootstrap import build_app
from podplane.cloud.wiring import build_cloud
from podplane.domain.effects import Role
from podplane.services.cloud_access import attach_cloud
from podplane.settings import Settings
from podplane_sandbox.main import Sandbox
from tests.conftest import mint

_home = Path(tempfile.mkdtemp(prefix="podplane-fuzz-"))
# Routes that read the cloud (clusters, inspect) need one: the sandbox's AWS side, time frozen.
_cloud = Sandbox(_home / "cloud", aws_port=0, kube_port=0, speed=0, seed=5)
_cloud.start()
app = build_app(Settings(home=_home, database_url=f"sqlite:///{_home / 'fuzz.db'}",
                         aws_endpoint_url=_cloud.aws_url))
ADMIN = asyncio.run(mint(app, "fuzz-admin", Role.ADMIN))
# What the skipped lifespan would attach: the ports on the sandbox (routes that read the cloud)
attach_cloud(app.state.podplane, *build_cloud(app.state.podplane.settings))


async def without_lifespan(scope, receive, send):  # type: ignore[no-untyped-def]
    """Schemathesis enters the lifespan on every call; the MCP session manager runs once per
    process, so this harness answers lifespan itself and lets HTTP through (the routes
    under test need no background runner: reads and 202s only)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await app(scope, receive, send)


schema = schemathesis.openapi.from_asgi("/openapi.json", without_lifespan)


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: schemathesis.Case) -> None:
    response = case.call(headers={"Authorization": f"Bearer {ADMIN}"})
    assert response.status_code < 500, (case.method, case.path, response.text)
    if response.status_code >= 400:
        ctype = response.headers["content-type"]  # a list in schemathesis' transport
        assert "application/problem+json" in ctype
        assert response.json()["code"]
