"""CPU per authenticated request in the server's own request path, without the network: the
ASGI app is called in-process and its CPU time counted (time.process_time), so the figure
barely moves with what else the machine runs, unlike req/s under wrk.

    nice .venv/bin/python bench/request_path.py [--requests 3000] [--operations 40]

Two apps over one database and one engine, side by side in the same run:
- podplane as built (`podplane.api.app.create_app`: every router straight onto the app,
  FastAPI's OpenTelemetry hooks off);
- FastAPI's defaults (the routers nested under one `/api/v1` router, telemetry on), the
  shape podplane had before issue 21's request-path work.
Routes: `/health` (no auth), `/session` (the token look-up only), `/operations?limit=20`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette.middleware.gzip import GZipMiddleware

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]
os.environ.setdefault("PODPLANE_TEST_WORKFLOWS", "1")  # seeds with the test workflow

from tests.conftest import mint  # noqa: E402

from podplane.api import problems  # noqa: E402
from podplane.api.app import API_ROUTERS  # noqa: E402
from podplane.api.limits import BodyLimit  # noqa: E402
from podplane.bootstrap import build_app  # noqa: E402
from podplane.domain.effects import Role  # noqa: E402
from podplane.settings import Settings  # noqa: E402

ROUTES = ("/api/v1/health", "/api/v1/session", "/api/v1/operations?limit=20")


def fastapi_defaults(built: FastAPI) -> FastAPI:
    """The same routers, state and middleware in FastAPI's default shape."""
    app = FastAPI(docs_url=None, redoc_url=None)
    app.state.podplane = built.state.podplane
    problems.install(app)
    api = APIRouter(prefix="/api/v1")
    for router in API_ROUTERS:
        api.include_router(router)
    app.include_router(api)
    app.add_middleware(BodyLimit, max_bytes=built.state.podplane.settings.max_body_bytes)
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=5)
    return app


async def call(app: Any, target: str, token: str) -> None:
    path, _, query = target.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": query.encode(), "root_path": "", "client": ("127.0.0.1", 1),
             "server": ("127.0.0.1", 80),
             "headers": [(b"host", b"bench"), (b"authorization", f"Bearer {token}".encode())]}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    assert sent[0]["status"] == 200, sent


async def cpu_ms(app: Any, target: str, token: str, n: int) -> float:
    for _ in range(200):  # warm: caches filled, code paths loaded
        await call(app, target, token)
    start = time.process_time()
    for _ in range(n):
        await call(app, target, token)
    return 1000 * (time.process_time() - start) / n


async def seed(app: Any, token: str, count: int) -> None:
    for i in range(count):
        await call_post(app, token, {"target": f"bench/op-{i}",
                                     "params": {"name": f"op-{i}", "delay": 0}})
    engine = app.state.podplane.ops
    while True:  # until the engine has finished them all (delay 0): nothing changes after
        items, _ = await engine.page(status=None, kind=None, target=None, limit=200,
                                     cursor=None, history=False)
        if all(op.terminal for op in items):
            return
        await asyncio.sleep(0.2)


async def call_post(app: Any, token: str, body: dict[str, Any]) -> None:
    import httpx

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://bench") as client:
        r = await client.post("/api/v1/operations/_test", json=body,
                              headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 202, r.text


async def main(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-request-path-"))
    built = build_app(Settings(home=home / "home", database_url=f"sqlite:///{home / 'pp.db'}",
                               rate_per_second=1e9, rate_burst=1e9))
    async with built.router.lifespan_context(built):
        token = await mint(built, "bench", Role.OPERATOR)
        await seed(built, token, args.operations)
        plain = fastapi_defaults(built)
        print(f"CPU ms per request, in-process, {args.requests} requests each "
              f"({args.operations} operations stored):")
        print(f"  {'route':<30} {'podplane':>9} {'FastAPI defaults':>17} {'ratio':>6}")
        for target in ROUTES:
            ours = await cpu_ms(built, target, token, args.requests)
            theirs = await cpu_ms(plain, target, token, args.requests)
            print(f"  {target.removeprefix('/api/v1'):<30} {ours:9.3f} {theirs:17.3f} "
                  f"{ours / theirs:6.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--operations", type=int, default=40)
    asyncio.run(main(parser.parse_args()))
