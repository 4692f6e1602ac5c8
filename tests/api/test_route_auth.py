"""Table-driven over every route the app serves: 401 without a token, 403 below the role.

The table is the app itself, so a route added later is covered without editing this file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute, APIWebSocketRoute, iter_route_contexts
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from podplane.bootstrap import build_app
from podplane.domain.effects import Role
from podplane.services.registry import ServiceSpec
from podplane.settings import Settings
from tests.conftest import mint

PUBLIC = {("GET", "/api/v1/health"), ("POST", "/api/v1/session"),
          ("GET", "/api/docs"), ("GET", "/api/docs/assets/{name}")}  # the API's reference
BELOW = {Role.OPERATOR: Role.VIEWER, Role.ADMIN: Role.OPERATOR}


def _fill(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def _spec(route: APIRoute | APIWebSocketRoute) -> ServiceSpec | None:
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        spec = getattr(dep.call, "__podplane_service__", None)
        if spec is not None:
            return spec  # type: ignore[no-any-return]
        stack.extend(dep.dependencies)
    return None


def _routes(app: Any, kind: type) -> Iterator[tuple[str, Any]]:
    """(full path, route) for every route, including those of included routers."""
    for rc in iter_route_contexts(app.routes):
        if isinstance(rc.original_route, kind):
            yield rc.path, rc.original_route


def _http_routes(app: Any) -> Iterator[tuple[str, str, ServiceSpec | None]]:
    for path, route in _routes(app, APIRoute):
        if path.startswith("/api/"):
            for method in sorted(route.methods - {"HEAD"}):
                yield method, path, _spec(route)


@pytest.fixture
def client(tmp_path) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    app = build_app(Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/db.sqlite"))
    with TestClient(app, base_url="http://127.0.0.1:3099") as c:
        yield c


@pytest.fixture
def tokens(client: TestClient) -> dict[Role, str]:
    async def all_roles() -> dict[Role, str]:
        return {r: await mint(client.app, f"r-{r.value}", r) for r in Role}

    assert client.portal is not None
    return client.portal.call(all_roles)


def test_every_private_route_needs_a_token(client: TestClient) -> None:
    checked = 0
    for method, path, _ in _http_routes(client.app):
        if (method, path) in PUBLIC:
            continue
        r = client.request(method, _fill(path), json={})
        assert r.status_code == 401, (method, path, r.status_code, r.text)
        assert r.json()["code"] == "unauthenticated"
        checked += 1
    assert checked >= 5


def test_every_route_refuses_a_role_below_its_service(
    client: TestClient, tokens: dict[Role, str]
) -> None:
    checked = 0
    for method, path, spec in _http_routes(client.app):
        if spec is None or spec.role not in BELOW:
            continue
        weaker = tokens[BELOW[spec.role]]
        r = client.request(method, _fill(path), json={},
                           headers={"Authorization": f"Bearer {weaker}"})
        assert r.status_code == 403, (method, path, spec.action, r.status_code, r.text)
        assert r.json()["code"] == "forbidden"
        checked += 1
    assert checked >= 3


def test_every_websocket_route_needs_a_token(client: TestClient) -> None:
    for path, _route in _routes(client.app, APIWebSocketRoute):
        with pytest.raises(WebSocketDisconnect) as closed:
            with client.websocket_connect(_fill(path)) as ws:
                ws.receive_json()
        assert closed.value.code == 4401, path


def test_every_mounted_app_needs_a_token(client: TestClient) -> None:
    for rc in iter_route_contexts(client.app.routes):
        if rc.path.startswith("/mcp"):
            r = client.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers={"accept": "application/json, text/event-stream"})
            assert r.status_code == 401


def test_cookie_write_from_a_foreign_origin_is_refused(
    client: TestClient, tokens: dict[Role, str]
) -> None:
    signed = client.post("/api/v1/session", json={"token": tokens[Role.ADMIN]})
    assert signed.status_code == 200
    assert "httponly" in signed.headers["set-cookie"].lower()
    assert "samesite=strict" in signed.headers["set-cookie"].lower()
    body = {"name": "from-evil", "role": "viewer"}
    evil = client.post("/api/v1/tokens", json=body, headers={"Origin": "https://evil.example"})
    assert evil.status_code == 403
    missing = client.post("/api/v1/tokens", json=body)
    assert missing.status_code == 403
    ok = client.post("/api/v1/tokens", json=body, headers={"Origin": "http://127.0.0.1:3099"})
    assert ok.status_code == 201, ok.text
    assert client.get("/api/v1/session").json()["face"] == "ui"
