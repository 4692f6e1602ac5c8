"""How the control plane serves the console: pages, assets, the boot session, headers.

No browser here: the ASGI app in-process, with a tiny fake build in place of the real one.
"""

from __future__ import annotations

import gzip
import json
import re
import runpy
from pathlib import Path

import pytest

from podplane.domain.effects import Role
from podplane.settings import Settings
from podplane.web import pages
from tests.conftest import mint

SESSION_COOKIE = Settings(public_url=None).session_cookie  # the session router's and pages'

INDEX = "<!doctype html><html><head><title>podplane</title></head><body></body></html>"


@pytest.fixture
def fake_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "console"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text(INDEX)
    (root / "assets" / "index-abc123.js").write_text("console.log('plain');" * 100)
    (root / "assets" / "index-abc123.js.gz").write_bytes(gzip.compress(b"console.log('gz');"))
    monkeypatch.setattr(pages, "STATIC", root)
    return root


def _boot(html: str) -> object:
    match = re.search(r'<script id="podplane-boot" type="application/json">(.*?)</script>', html)
    assert match, html
    return json.loads(match.group(1))


async def test_console_paths_serve_the_app_with_no_session(anon, fake_build) -> None:  # type: ignore[no-untyped-def]
    for path in ["/", "/operations", "/operations/op-1", "/audit", "/tokens", "/clusters/c1/nodes"]:
        r = await anon.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-type"].startswith("text/html")
        assert _boot(r.text) == {"session": None}
        assert "connect-src 'self'" in r.headers["content-security-policy"]
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["cache-control"] == "no-store"


async def test_signed_in_page_carries_the_principal(app, anon, fake_build) -> None:  # type: ignore[no-untyped-def]
    token = await mint(app, "boot-op", Role.OPERATOR)
    r = await anon.post("/api/v1/session", json={"token": token})
    assert r.status_code == 200, r.text
    page = await anon.get("/operations")
    assert _boot(page.text) == {"session": {"name": "boot-op", "role": "operator", "face": "ui"}}
    anon.cookies.set(SESSION_COOKIE, "not-a-session")
    assert _boot((await anon.get("/operations")).text) == {"session": None}


async def test_boot_data_cannot_close_its_script(fake_build) -> None:  # type: ignore[no-untyped-def]
    html = pages._with_boot(INDEX, {"session": {"name": "</script><script>alert(1)"}})
    assert "</script><script>alert" not in html
    assert _boot(html) == {"session": {"name": "</script><script>alert(1)"}}


async def test_assets_are_gzipped_when_accepted_and_cached_forever(anon, fake_build) -> None:  # type: ignore[no-untyped-def]
    r = await anon.get("/assets/index-abc123.js", headers={"accept-encoding": "gzip"})
    assert r.status_code == 200
    assert r.headers["content-encoding"] == "gzip"
    assert r.text == "console.log('gz');"  # httpx decoded the pre-compressed file
    assert "immutable" in r.headers["cache-control"]
    assert r.headers["content-type"].startswith("text/javascript")
    plain = await anon.get("/assets/index-abc123.js", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.text.startswith("console.log('plain');")


@pytest.mark.parametrize("name", ["missing.js", "index-abc123.js.gz", ".hidden", "..%2Findex.html"])
async def test_unknown_assets_are_problems(anon, fake_build, name: str) -> None:  # type: ignore[no-untyped-def]
    r = await anon.get(f"/assets/{name}")
    assert r.status_code == 404
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["code"] == "not_found"


async def test_api_routes_are_not_shadowed_by_console_paths(anon, fake_build) -> None:  # type: ignore[no-untyped-def]
    r = await anon.get("/api/v1/nope")
    assert r.status_code == 404
    assert r.json()["code"] == "not_found"
    assert (await anon.get("/api/v1/health")).json()["status"] == "ok"


async def test_without_a_build_the_page_says_how_to_build(anon, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pages, "STATIC", tmp_path / "nothing")
    r = await anon.get("/")
    assert r.status_code == 200
    assert "make console" in r.text


def test_cookie_name_comes_from_the_settings_both_faces_read() -> None:
    assert SESSION_COOKIE == "podplane_session"
    assert Settings(public_url="https://pp.example.com").session_cookie == \
        "__Host-podplane_session"


def test_openapi_dump_script_writes_the_schema(tmp_path: Path) -> None:
    """The console's client is generated from this document (make console)."""
    out = tmp_path / "openapi.json"
    script = Path(__file__).resolve().parents[2] / "web" / "scripts" / "dump_openapi.py"
    module = runpy.run_path(str(script))
    module["main"](out)
    schema = json.loads(out.read_text())
    assert "/api/v1/session" in schema["paths"]
    assert "/api/v1/audit" in schema["paths"]
