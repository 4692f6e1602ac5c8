"""Health, problems, tokens and audit through the REST face."""

from __future__ import annotations

import pytest

from tests.conftest import client_for


async def test_health_is_public(anon) -> None:  # type: ignore[no-untyped-def]
    r = await anon.get("/api/v1/health")
    assert r.status_code == 200
    assert r.json()["status"] == "ok"


async def test_unknown_route_is_a_problem(anon) -> None:  # type: ignore[no-untyped-def]
    r = await anon.get("/api/v1/nope")
    assert r.status_code == 404
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["code"] == "not_found"


async def test_bad_token_is_401(app) -> None:  # type: ignore[no-untyped-def]
    async with client_for(app, "pp_wrong") as c:
        r = await c.get("/api/v1/audit")
    assert r.status_code == 401
    assert r.json()["code"] == "unauthenticated"


@pytest.mark.postgres
async def test_token_lifecycle_is_audited(app, admin, db_url) -> None:  # type: ignore[no-untyped-def]
    r = await admin.post("/api/v1/tokens", json={"name": "ci-bot", "role": "viewer"})
    assert r.status_code == 201, r.text
    secret = r.json()["token"]
    async with client_for(app, secret) as bot:
        assert (await bot.get("/api/v1/audit")).status_code == 200
        denied = await bot.post("/api/v1/tokens", json={"name": "x", "role": "admin"})
        assert denied.status_code == 403
        assert denied.json()["code"] == "forbidden"
    assert (await admin.delete("/api/v1/tokens/ci-bot")).status_code == 200
    async with client_for(app, secret) as bot:
        assert (await bot.get("/api/v1/audit")).status_code == 401
    audit = (await admin.get("/api/v1/audit")).json()
    actions = [(a["action"], a["target"], a["result"], a["principal"]) for a in audit]
    assert ("token.create", "token/ci-bot", "ok", "t-admin") in actions
    assert ("token.revoke", "token/ci-bot", "ok", "t-admin") in actions


async def test_validation_error_is_422_problem(admin) -> None:  # type: ignore[no-untyped-def]
    r = await admin.post(
        "/api/v1/tokens", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 422
    assert r.json()["code"] == "invalid_input"


async def test_oversized_body_is_413(admin) -> None:  # type: ignore[no-untyped-def]
    r = await admin.post("/api/v1/tokens", content=b"x" * 2_000_000)
    assert r.status_code == 413
