"""The console's security settings: `public_url` decides the session cookie (Secure, __Host-)
and the trusted Origin; the API docs load from this server under the console's CSP; a step's
unexpected error reaches readers classified, with a log id; the local CLI is audited."""

from __future__ import annotations

import getpass
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from typer.testing import CliRunner

from podplane.api.routers.operations import ErrorOut
from podplane.bootstrap import build_app
from podplane.cli import app as cli_app
from podplane.domain.effects import Role
from podplane.ops.execute import error_of
from podplane.settings import Settings
from podplane.web.pages import CSP
from tests.conftest import mint

PUBLIC = "https://PodPlane.example.com:443/console"  # scheme, case and default port vary


def _client(tmp_path: Path, public_url: str | None = None) -> TestClient:
    # The database PODPLANE_HOME implies, so the local CLI and the server share it.
    # behind a TLS-terminating proxy that rewrites Host to the upstream's address
    app = build_app(Settings(home=tmp_path / "home", public_url=public_url,
                             allowed_hosts=["10.0.0.5:3099"]))
    return TestClient(app, base_url="http://10.0.0.5:3099")


def test_with_a_public_url_only_its_hosts_are_served(tmp_path: Path) -> None:
    """Issue 34, S14: a DNS-rebinding page reaches the server under its own name; with
    PODPLANE_PUBLIC_URL set that Host is refused (421) before anything runs, REST and
    WebSocket alike. The public host, listed ones and loopback (SSM port-forward) are served."""
    with _client(tmp_path, public_url=PUBLIC) as c:
        for host, status in (("attacker.example:3099", 421), ("podplane.example.com", 200),
                             ("PodPlane.example.com:443", 200), ("localhost:3099", 200),
                             ("127.0.0.1:3099", 200), ("10.0.0.5:3099", 200)):
            r = c.get("/api/v1/health", headers={"host": host})
            assert r.status_code == status, (host, r.text)
        assert c.get("/api/v1/health", headers={"host": "evil"}).json()["code"] == \
            "host_not_allowed"
        with pytest.raises(WebSocketDisconnect):   # the handshake is refused
            with c.websocket_connect("/api/v1/operations/op-x/events",
                                     headers={"host": "attacker.example"}) as ws:
                ws.receive_json()
    with _client(tmp_path / "local") as local:   # no public URL: local use, any Host
        assert local.get("/api/v1/health", headers={"host": "whatever:1"}).status_code == 200


@pytest.fixture
def behind_proxy(tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    with _client(tmp_path, public_url=PUBLIC) as c:
        assert c.portal is not None
        yield c, c.portal.call(mint, c.app, "admin-1", Role.ADMIN)


def test_https_public_url_makes_the_cookie_secure_host_only(
    behind_proxy: tuple[TestClient, str],
) -> None:
    client, token = behind_proxy
    signed = client.post("/api/v1/session", json={"token": token})
    assert signed.status_code == 200
    cookie = signed.headers["set-cookie"]
    assert cookie.startswith("__Host-podplane_session=")
    attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert {"secure", "httponly", "path", "samesite"} <= attributes
    assert "domain" not in attributes  # __Host- forbids it
    assert "Path=/" in cookie


def test_only_the_public_origin_may_write_with_the_cookie(
    behind_proxy: tuple[TestClient, str],
) -> None:
    client, token = behind_proxy
    sid = client.post("/api/v1/session", json={"token": token}).cookies[
        "__Host-podplane_session"]
    client.cookies.set("__Host-podplane_session", sid)
    body = {"name": "made-here", "role": "viewer"}
    # The address the request reached is the proxy's hop, not ours to trust.
    hop = client.post("/api/v1/tokens", json=body, headers={"Origin": "http://10.0.0.5:3099"})
    assert hop.status_code == 403
    plain = client.post("/api/v1/tokens", json=body,
                        headers={"Origin": "http://podplane.example.com"})
    assert plain.status_code == 403  # http is another origin than https
    ok = client.post("/api/v1/tokens", json=body,
                     headers={"Origin": "https://podplane.example.com"})
    assert ok.status_code == 201, ok.text
    assert client.get("/api/v1/session").json()["face"] == "ui"


def test_without_public_url_plain_http_keeps_the_plain_cookie(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        assert client.portal is not None
        token = client.portal.call(mint, client.app, "admin-2", Role.ADMIN)
        cookie = client.post("/api/v1/session", json={"token": token}).headers["set-cookie"]
    assert cookie.startswith("podplane_session=") and "secure" not in cookie.lower()


def test_a_public_url_that_is_not_http_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="PODPLANE_PUBLIC_URL"):
        Settings(public_url="ftp://example.com")


def test_api_docs_load_from_this_server_under_the_console_csp(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        page = client.get("/api/docs")
        assert page.status_code == 200
        assert page.headers["content-security-policy"] == CSP
        sources = [s.split('"')[0] for s in page.text.split('src="')[1:]] + \
            [s.split('"')[0] for s in page.text.split('href="')[1:]]
        assert sources and all(s.startswith("/api/docs/assets/") for s in sources), sources
        assert "<script>" not in page.text  # no inline script: CSP script-src 'self'
        for src in sources:
            asset = client.get(src)
            assert asset.status_code == 200, src
            assert len(asset.content) > 100
        bundle = client.get("/api/docs/assets/swagger-ui-bundle.js")
        assert "javascript" in bundle.headers["content-type"]
        assert "SwaggerUIBundle" in bundle.text
        assert client.get("/api/docs/assets/..%2Fpages.py").status_code == 404
        spec = client.get("/openapi.json").json()
        assert spec["openapi"].startswith("3.1")


def test_unexpected_step_error_is_classified_with_a_log_id(caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    raw = "(sqlite3.IntegrityError) UNIQUE constraint failed: tokens.token_hash [SQL: INSERT"
    with caplog.at_level(logging.ERROR, logger="podplane.ops"):
        error = error_of(RuntimeError(raw))
    assert error["code"] == "internal_error"
    assert "SQL" not in error["message"] and "sqlite" not in error["message"]
    assert error["log_id"] in error["message"]
    logged = [r for r in caplog.records if error["log_id"] in r.getMessage()]
    assert logged and raw in logged[0].getMessage()  # the server log keeps the detail
    shown = ErrorOut.model_validate(error)
    assert shown.log_id == error["log_id"] and "SQL" not in shown.message
    # A row recorded before log ids existed is shown classified too.
    old = ErrorOut.model_validate({"code": "internal_error", "message": f"KeyError: {raw}"})
    assert "SQL" not in old.message and "server log" in old.message


def test_local_cli_actions_are_audited_as_the_os_user(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    runner = CliRunner()
    made = runner.invoke(cli_app, ["token", "create", "--name", "ci-bot", "--home", home])
    assert made.exit_code == 0, made.output
    gone = runner.invoke(cli_app, ["token", "revoke", "ci-bot", "--home", home])
    assert gone.exit_code == 0, gone.output
    with _client(tmp_path) as client:
        assert client.portal is not None
        token = client.portal.call(mint, client.app, "reader", Role.VIEWER)
        rows = client.get("/api/v1/audit", headers={"Authorization": f"Bearer {token}"}).json()
    mine = [(a["principal"], a["face"], a["action"], a["target"], a["result"])
            for a in reversed(rows) if a["principal"].startswith("local:")]
    user = f"local:{getpass.getuser()}"
    assert mine == [(user, "cli", "token.create", "token/ci-bot", "ok"),
                    (user, "cli", "token.revoke", "token/ci-bot", "ok")]
