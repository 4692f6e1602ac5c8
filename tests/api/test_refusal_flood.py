"""Refusals cannot be used to flood (issue 34, S4 and S11): who the caller is comes before the
body (401 and 403 before 422); a flood of bogus tokens from one address writes one audit row a
second, not one each, and once the address has spent its failures it is refused before any
token look-up, while a token the cache knows as valid keeps working. No real time: the
limiter's clock is driven by hand."""

from __future__ import annotations

from typing import Any

from podplane.services.access.limits import limits_of
from podplane.services.access.strangers import strangers_of
from podplane.store import audit_log
from tests.conftest import client_for


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _rows(app: Any, action: str | None = None) -> list[Any]:
    async with app.state.podplane.sessions() as db:
        return list(await audit_log.page(db, limit=1000, before_id=None, principal=None,
                                         action=action))


async def test_a_body_that_does_not_parse_is_401_or_403_before_422(  # type: ignore[no-untyped-def]
        app, tokens_by_role) -> None:
    broken = {"content": b"{bad", "headers": {"content-type": "application/json"}}
    expected = {None: 401, "viewer": 403, "operator": 422}
    for role, status in expected.items():
        token = tokens_by_role[role] if role else None
        async with client_for(app, token) as c:
            r = await c.post("/api/v1/clusters", **broken)
        assert r.status_code == status, (role, r.text)
        assert r.headers["content-type"] == "application/problem+json"
    rows = [(r.principal, r.result) for r in await _rows(app, "cluster.create")]
    assert sorted(rows) == sorted([("anonymous", "error:unauthenticated"),
                                   ("t-viewer", "error:forbidden"),
                                   ("t-operator", "error:invalid_input")])


async def test_a_bogus_token_flood_is_coalesced_then_refused_before_any_lookup(  # type: ignore[no-untyped-def]
        app, tokens_by_role) -> None:
    state = app.state.podplane
    clock = Clock()
    limits_of(state).clock = clock
    guard = strangers_of(state)
    guard.clock, guard.rate, guard.burst = clock, 10.0, 20.0
    before = len(await _rows(app))
    async with client_for(app, tokens_by_role["viewer"]) as known:   # cached as valid now
        assert (await known.get("/api/v1/operations")).status_code == 200
    async with client_for(app, "pp_bogus") as bogus, \
            client_for(app, tokens_by_role["viewer"]) as known:
        codes = [(await bogus.get("/api/v1/operations")).status_code for _ in range(200)]
        assert (await known.get("/api/v1/operations")).status_code == 200   # still served
        assert codes[:20] == [401] * 20 and set(codes[20:]) == {429}
        clock.now += 1.0   # ten more failures allowed, and a new audit window
        later = [(await bogus.get("/api/v1/operations")).status_code for _ in range(12)]
    assert later == [401] * 10 + [429] * 2
    rows = (await _rows(app))[: len(await _rows(app)) - before]
    written = sorted((r.result, (r.detail or {}).get("coalesced", 0)) for r in rows
                     if r.principal == "anonymous")
    # one 401 and one 429 row per second; the next 401 row names the 19 folded into the first
    assert written == [("error:rate_limited", 0), ("error:rate_limited", 179),
                       ("error:unauthenticated", 0), ("error:unauthenticated", 19)]
