"""429 refusals (rate, open waiters, open streams) are audited, and a flood of them is
coalesced: at most one row per token, action and one-second window, the next row naming how
many refusals it stands for (docs/security.md, "What is audited"). No real time: the
limiter's clock is driven by hand, with the fixtures of tests/api/test_limits.py."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from podplane.domain.effects import Role
from podplane.services.access.limits import limits_of
from podplane.store import audit_log
from podplane.store import tokens as token_rows
from tests.api.test_limits import (  # noqa: F401  (module fixtures)
    Clock,
    app,
    sync_client,
)
from tests.conftest import client_for, mint

LIMITED = "error:rate_limited"


async def _limited_rows(application: Any, principal: str) -> list[tuple[str, str, Any]]:
    """(action, face, detail) of the principal's 429 rows, oldest first (read from the store:
    reading them over REST would spend the rate under test)."""
    async with application.state.podplane.sessions() as db:
        rows = await audit_log.page(db, limit=1000, before_id=None, principal=principal,
                                    action=None)
    return [(r.action, r.face, r.detail) for r in reversed(rows) if r.result == LIMITED]


async def test_a_flood_of_429s_is_one_row_per_token_action_and_second(app) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    clock = Clock()
    limits_of(app.state.podplane).clock = clock
    busy, calm = await mint(app, "busy", Role.VIEWER), await mint(app, "calm", Role.VIEWER)
    async with client_for(app, busy) as c, client_for(app, calm) as other:
        assert [(await c.get("/api/v1/operations")).status_code for _ in range(3)] == [200] * 3
        flood = [(await c.get("/api/v1/operations")).status_code for _ in range(50)]
        assert flood == [429] * 50
        assert await _limited_rows(app, "busy") == [("operation.list", "api", None)]
        # another action in the same second is its own row
        assert (await c.get("/api/v1/audit")).status_code == 429
        clock.now += 0.4  # same window: 0.8 of a request refilled, refused, coalesced
        assert (await c.get("/api/v1/operations")).status_code == 429
        assert len(await _limited_rows(app, "busy")) == 2
        clock.now += 0.6  # the next second: two requests fit, the third is refused
        assert [(await c.get("/api/v1/operations")).status_code for _ in range(3)] == [
            200, 200, 429]
        assert (await other.get("/api/v1/operations")).status_code == 200  # its own bucket
    assert await _limited_rows(app, "busy") == [
        ("operation.list", "api", None), ("audit.list", "api", None),
        ("operation.list", "api", {"coalesced": 50})]  # 49 of the flood + 1 a moment later
    assert await _limited_rows(app, "calm") == []


def test_the_stream_cap_refusal_of_a_websocket_is_audited(sync_client: TestClient) -> None:  # noqa: F811
    c = sync_client
    assert c.portal is not None
    agent = c.portal.call(mint, c.app, "streamer", Role.OPERATOR)
    limits_of(c.app.state.podplane).clock = Clock()  # both refusals in one window
    as_agent = {"Authorization": f"Bearer {agent}"}
    op_id = c.post("/api/v1/operations/_test", headers=as_agent, json={
        "target": "thing/ws", "params": {"name": "ws", "delay": 3600, "poll": 5}}).json()["id"]
    with c.websocket_connect(f"/api/v1/operations/{op_id}/events", headers=as_agent) as ws:
        assert ws.receive_json()["id"] == op_id
        for _ in range(2):  # refused twice in the same second: one row
            with pytest.raises(WebSocketDisconnect) as second:
                with c.websocket_connect(f"/api/v1/operations/{op_id}/events",
                                         headers=as_agent) as extra:
                    extra.receive_json()
            assert second.value.code == 4429
    rows = c.portal.call(_limited_rows, c.app, "streamer")
    assert rows == [("WS /api/v1/operations/{op_id}/events", "api", None)]


def test_a_refused_websocket_handshake_is_audited_once(sync_client: TestClient) -> None:  # noqa: F811
    """A 401 handshake (unknown token) writes one row, as the same refusal over REST does."""
    c = sync_client
    unknown = {"Authorization": "Bearer pp_not_a_token"}
    with pytest.raises(WebSocketDisconnect) as refused:
        with c.websocket_connect("/api/v1/operations/op-x/events", headers=unknown) as ws:
            ws.receive_json()
    assert refused.value.code == 4401
    rows = c.portal.call(_refusals, c.app)  # type: ignore[union-attr]
    assert rows == [("WS /api/v1/operations/{op_id}/events", "api", "error:unauthenticated")]


def test_a_log_stream_over_the_rate_is_closed_4429_and_audited(sync_client: TestClient) -> None:  # noqa: F811
    c = sync_client
    assert c.portal is not None
    agent = c.portal.call(mint, c.app, "reader", Role.VIEWER)
    limits = limits_of(c.app.state.podplane)
    limits.clock = Clock()
    limits.buckets[c.portal.call(_token_id, c.app, "reader")] = (0.0, limits.clock())
    url = "/api/v1/clusters/gpu/jobs/j1/logs/stream"
    with pytest.raises(WebSocketDisconnect) as refused:
        with c.websocket_connect(url, headers={"Authorization": f"Bearer {agent}"}) as ws:
            ws.receive_json()
    assert refused.value.code == 4429
    assert c.portal.call(_limited_rows, c.app, "reader") == [
        ("WS /api/v1/clusters/{cluster}/jobs/{job}/logs/stream", "api", None)]


async def _refusals(application: Any) -> list[tuple[str, str, str]]:
    async with application.state.podplane.sessions() as db:
        rows = await audit_log.page(db, limit=1000, before_id=None, principal=None,
                                    action=None)
    return [(r.action, r.face, r.result) for r in reversed(rows) if r.action.startswith("WS ")]


async def _token_id(application: Any, name: str) -> str:
    async with application.state.podplane.sessions() as db:
        row = await token_rows.by_name(db, name)
    assert row is not None
    return str(row.id)
