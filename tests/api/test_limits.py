"""Per-token limits (rate, long-poll waiters, streams), revocation that closes open streams,
and the token look-up cache's bounds. No test waits on real time: the limiter's and the
cache's clocks are driven by hand, and a held request is cancelled once its slot is seen."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from podplane.bootstrap import build_app
from podplane.domain.effects import Role
from podplane.mcp.http import McpHttp
from podplane.services.access.limits import STREAMS, WAITERS, limits_of
from podplane.services.access.lookups import TTL_SECONDS, lookups_of
from podplane.services.jobs import service as jobs_service
from podplane.settings import Settings
from podplane.store import audit_log
from podplane.store import tokens as token_rows
from tests.conftest import client_for, mint


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _settings(tmp_path: Any, **limits: Any) -> Settings:
    return Settings(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'pp.db'}",
                    **limits)


@pytest.fixture
async def app(tmp_path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PODPLANE_TEST_WORKFLOWS", "1")
    application = build_app(_settings(tmp_path, rate_per_second=2, rate_burst=3,
                                      max_waiters=1, max_streams=1))
    async with application.router.lifespan_context(application):
        yield application


async def _running_op(client: httpx.AsyncClient) -> str:
    """An operation that stays running for the whole test (its step polls every 5 s)."""
    r = await client.post("/api/v1/operations/_test", json={
        "target": "thing/held", "params": {"name": "held", "delay": 3600, "poll": 5}})
    assert r.status_code == 202, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


async def test_rate_limit_is_per_token_with_retry_after(app) -> None:  # type: ignore[no-untyped-def]
    state = app.state.podplane
    clock = Clock()
    limits_of(state).clock = clock
    busy, calm = await mint(app, "busy", Role.VIEWER), await mint(app, "calm", Role.VIEWER)
    async with client_for(app, busy) as c, client_for(app, calm) as other:
        assert [(await c.get("/api/v1/operations")).status_code for _ in range(3)] == [200] * 3
        limited = await c.get("/api/v1/operations")
        assert limited.status_code == 429
        assert limited.headers["content-type"] == "application/problem+json"
        assert limited.headers["retry-after"] == "1"  # one request refills in 0.5 s
        assert limited.json()["code"] == "rate_limited"
        assert (await other.get("/api/v1/operations")).status_code == 200  # its own bucket
        clock.now += 0.5
        assert (await c.get("/api/v1/operations")).status_code == 200


async def test_long_poll_waiters_are_capped_per_token(app) -> None:  # type: ignore[no-untyped-def]
    state = app.state.podplane
    token = await mint(app, "waiter", Role.OPERATOR)
    async with client_for(app, token) as c:
        op_id = await _running_op(c)
        limits = limits_of(state)
        held = asyncio.create_task(c.get(f"/api/v1/operations/{op_id}/wait",
                                         params={"timeout": 50}))
        for _ in range(10_000):  # until the first wait has taken its slot
            if limits.held or held.done():
                break
            await asyncio.sleep(0)
        assert limits.held, held
        refused = await c.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 50})
        held.cancel()
        with pytest.raises(asyncio.CancelledError):
            await held
    assert refused.status_code == 429 and refused.headers["retry-after"] == "5"
    assert "holds 1 open waiters" in refused.json()["detail"]
    async with state.sessions() as db:  # the cap's refusal is audited (coalesced per second)
        rows = await audit_log.page(db, limit=10, before_id=None, principal="waiter",
                                    action="operation.wait")
    assert [(r.result, r.face) for r in rows] == [("error:rate_limited", "api")]
    assert [k for k, _ in limits.held] == []  # the cancelled wait gave its slot back
    assert WAITERS == "waiters"


@pytest.fixture
def sync_client(tmp_path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PODPLANE_TEST_WORKFLOWS", "1")
    application = build_app(_settings(tmp_path, max_streams=1))
    with TestClient(application, base_url="http://127.0.0.1:3099") as c:
        yield c


def _mint(client: TestClient, name: str, role: Role) -> str:
    assert client.portal is not None
    return client.portal.call(mint, client.app, name, role)


def _token_id(client: TestClient, name: str) -> str:
    async def find() -> str:
        async with client.app.state.podplane.sessions() as db:
            row = await token_rows.by_name(db, name)
        assert row is not None
        return row.id

    assert client.portal is not None
    return client.portal.call(find)


def test_revoking_a_token_closes_its_websocket_and_caps_streams(sync_client: TestClient) -> None:
    c = sync_client
    admin, agent = _mint(c, "boss", Role.ADMIN), _mint(c, "agent", Role.OPERATOR)
    as_agent = {"Authorization": f"Bearer {agent}"}
    op_id = c.post("/api/v1/operations/_test", headers=as_agent, json={
        "target": "thing/ws", "params": {"name": "ws", "delay": 3600, "poll": 5}}).json()["id"]
    with c.websocket_connect(f"/api/v1/operations/{op_id}/events", headers=as_agent) as ws:
        assert ws.receive_json()["id"] == op_id
        assert dict(limits_of(c.app.state.podplane).held) == {(STREAMS, _token_id(c, "agent")): 1}
        with pytest.raises(WebSocketDisconnect) as second:  # over the stream cap of 1
            with c.websocket_connect(f"/api/v1/operations/{op_id}/events",
                                     headers=as_agent) as extra:
                extra.receive_json()
        assert second.value.code == 4429
        revoked = c.delete("/api/v1/tokens/agent", headers={"Authorization": f"Bearer {admin}"})
        assert revoked.status_code == 200
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(20):  # changes sent before the revocation, then the close
                assert ws.receive_json()["id"] == op_id
        assert (closed.value.code, closed.value.reason) == (4401, "token_revoked")
    assert c.get("/api/v1/operations", headers=as_agent).status_code == 401  # at once
    assert STREAMS == "streams"


async def test_revoking_a_token_ends_its_open_mcp_stream(app) -> None:  # type: ignore[no-untyped-def]
    """The MCP face ends a request still streaming when its token is revoked."""
    state = app.state.podplane
    token = await mint(app, "streamer", Role.VIEWER)
    face = McpHttp(app, state)
    streaming = asyncio.Event()

    async def forever(scope: Any, receive: Any, send: Any) -> None:  # an SSE stream
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        streaming.set()
        await asyncio.Event().wait()

    face.manager.handle_request = forever  # type: ignore[method-assign]
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        await asyncio.Event().wait()

    scope = {"type": "http", "method": "GET", "path": "/mcp/", "root_path": "/mcp",
             "headers": [(b"authorization", f"Bearer {token}".encode())], "query_string": b""}
    serving = asyncio.create_task(face(scope, receive, send))
    await streaming.wait()
    from podplane.services.access import tokens
    from podplane.services.access.auth import local_principal
    from podplane.services.context import Ctx

    await tokens.revoke_token(Ctx(local_principal(), state), "streamer")
    await asyncio.wait_for(serving, timeout=30)  # returns as soon as the stream is ended
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_token_cache_drops_a_revocation_here_at_once_and_elsewhere_within_ttl(app) -> None:  # type: ignore[no-untyped-def]
    state = app.state.podplane
    clock = Clock()
    lookups_of(state.sessions).clock = clock
    token = await mint(app, "cached", Role.VIEWER)
    async with client_for(app, token) as c:
        assert (await c.get("/api/v1/session")).status_code == 200  # now cached
        # Another replica revokes it: this process does not hear of it...
        async with state.sessions.begin() as db:
            row = await token_rows.by_name(db, "cached")
            assert row is not None
            await token_rows.revoke(db, row)
        assert (await c.get("/api/v1/session")).status_code == 200
        clock.now += TTL_SECONDS  # ...until its cached answer expires: the bound
        assert (await c.get("/api/v1/session")).status_code == 401


async def test_face_comes_from_how_the_caller_authenticated(app) -> None:  # type: ignore[no-untyped-def]
    token = await mint(app, "liar", Role.VIEWER)
    admin = await mint(app, "auditor", Role.ADMIN)
    async with client_for(app, token, **{"X-Podplane-Face": "ui"}) as c:
        who = (await c.get("/api/v1/session")).json()
        refused = await c.get("/api/v1/tokens")  # audited refusal
    assert who["face"] == "api" and refused.status_code == 403
    async with client_for(app, admin) as a:
        (row,) = (await a.get("/api/v1/audit", params={"principal": "liar"})).json()
    assert (row["face"], row["action"], row["result"]) == ("api", "token.list",
                                                           "error:forbidden")


async def test_concurrent_misses_of_one_token_share_one_lookup(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """When the cached answer expires under load, the requests in flight make one token read
    (and one last-used write), not one each (issue 21: that queue was the latency tail)."""
    app = build_app(_settings(tmp_path))  # the default rate limit lets 30 at once through
    async with app.router.lifespan_context(app):
        await _thirty_at_once_twice(app, monkeypatch)


async def _thirty_at_once_twice(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    state = app.state.podplane
    clock = Clock()
    lookups_of(state.sessions).clock = clock
    token = await mint(app, "busy", Role.VIEWER)
    reads = 0
    by_secret = token_rows.by_secret

    async def counted(db: Any, secret: str) -> Any:
        nonlocal reads
        reads += 1
        await asyncio.sleep(0)  # let the other requests arrive while this one reads
        return await by_secret(db, secret)

    monkeypatch.setattr(token_rows, "by_secret", counted)
    async with client_for(app, token) as c:
        for _ in range(2):  # a cold cache, then an expired entry
            answers = await asyncio.gather(*(c.get("/api/v1/session") for _ in range(30)))
            assert [r.status_code for r in answers] == [200] * 30
            clock.now += TTL_SECONDS
    assert reads == 2


async def test_a_lookup_that_a_revocation_overtakes_is_not_kept() -> None:
    from podplane.domain.principal import Principal
    from podplane.services.access.lookups import Lookups

    cache, release = Lookups(), asyncio.Event()
    principal = Principal(name="t", role=Role.VIEWER, token_id="t-1", face="api")

    async def slow_read() -> Principal:
        await release.wait()  # the row was read before the revocation committed
        return principal

    reading = asyncio.create_task(cache.once("token", "secret", slow_read))
    await asyncio.sleep(0)
    cache.revoked("t-1")
    release.set()
    assert await reading == principal  # that request had begun before the revocation
    assert cache.get("token", "secret") is None  # but nothing is kept for the next one


class _QuietStream:
    """A followed log stream of a quiet pod: one line, then nothing until it is closed."""

    async def batches(self) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "lines", "lines": [{"pod": "p", "line": "hello"}], "cursor": {"p": 1}}
        await asyncio.Event().wait()


def _quiet_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    async def opened(*_a: Any, **_k: Any) -> _QuietStream:
        return _QuietStream()

    opened.__podplane_service__ = jobs_service.open_log_stream.__podplane_service__  # type: ignore[attr-defined]
    monkeypatch.setattr(jobs_service, "open_log_stream", opened)


def test_a_log_stream_is_capped_and_closed_when_its_token_is_revoked(
        sync_client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34, S3: the job-log WebSocket holds a stream slot like every other stream, and
    revoking its token closes it (4401) instead of letting it deliver on."""
    c = sync_client
    _quiet_logs(monkeypatch)
    admin, viewer = _mint(c, "boss", Role.ADMIN), _mint(c, "watcher", Role.VIEWER)
    as_viewer = {"Authorization": f"Bearer {viewer}"}
    url = "/api/v1/clusters/gpu/jobs/j1/logs/stream"
    with c.websocket_connect(url, headers=as_viewer) as ws:
        assert ws.receive_json()["type"] == "lines"
        assert dict(limits_of(c.app.state.podplane).held) == {
            (STREAMS, _token_id(c, "watcher")): 1}
        with pytest.raises(WebSocketDisconnect) as second:   # over the cap of 1
            with c.websocket_connect(url, headers=as_viewer) as extra:
                extra.receive_json()
        assert second.value.code == 4429
        revoked = c.delete("/api/v1/tokens/watcher", headers={"Authorization": f"Bearer {admin}"})
        assert revoked.status_code == 200
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert (closed.value.code, closed.value.reason) == (4401, "token_revoked")
    assert dict(limits_of(c.app.state.podplane).held) == {}


@pytest.mark.parametrize("query", ["tail=5001", "since_seconds=2592001", "tail=0"])
def test_log_stream_tail_and_since_are_bounded_as_rest_is(
        sync_client: TestClient, monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    c = sync_client
    _quiet_logs(monkeypatch)
    viewer = _mint(c, "bounded", Role.VIEWER)
    with pytest.raises(WebSocketDisconnect) as refused:
        with c.websocket_connect(f"/api/v1/clusters/gpu/jobs/j1/logs/stream?{query}",
                                 headers={"Authorization": f"Bearer {viewer}"}) as ws:
            ws.receive_json()
    assert refused.value.code == 4422
