"""The mounted MCP face: auth, per-role tools, enforcement, face parity with REST, audit."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from podplane.domain.effects import Effect, Role
from podplane.mcp.tools import BY_NAME, TOOLS
from tests.conftest import client_for, mint
from tests.mcp.conftest import mcp_client, required_args, structured

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_no_or_bad_token_is_401_before_mcp(app) -> None:  # type: ignore[no-untyped-def]
    for auth in (None, "Bearer pp_not_a_token", "Basic abc", "Bearer "):
        headers = dict(MCP_HEADERS, **({"Authorization": auth} if auth else {}))
        async with client_for(app, None) as c:
            r = await c.post("/mcp/", json=INIT, headers=headers)
        assert r.status_code == 401, auth
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json()["code"] == "unauthenticated"
        assert "mcp-session-id" not in r.headers
        assert r.headers["www-authenticate"] == "Bearer"


async def test_foreign_origin_is_refused(app, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    async with client_for(app, tokens_by_role["admin"], Origin="http://evil.example") as c:
        r = await c.post("/mcp/", json=INIT, headers=MCP_HEADERS)
    assert r.status_code == 403
    assert r.json()["code"] == "forbidden"


async def test_a_session_is_bound_to_the_token_that_opened_it(app, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    async with client_for(app, tokens_by_role["viewer"]) as viewer:
        opened = await viewer.post("/mcp/", json=INIT, headers=MCP_HEADERS)
    assert opened.status_code == 200
    session = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    headers = {**MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    async with client_for(app, tokens_by_role["admin"]) as admin:
        r = await admin.post("/mcp/", json=listing, headers=headers)
    assert r.status_code == 404  # as if the session did not exist


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tools_list_follows_the_role(app, tokens_by_role, mode) -> None:  # type: ignore[no-untyped-def]
    for role in Role:
        async with mcp_client(app, tokens_by_role[role.value], mode) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == {t.name for t in TOOLS if role.allows(t.role)}, role
        assert "audit_list" in listed
        if role is Role.VIEWER:
            assert all(t.annotations and t.annotations.read_only_hint for t in listed.values())
            assert "token_list" not in listed  # an admin-only read
        if role is not Role.ADMIN:
            assert "token_revoke" not in listed


async def test_listed_annotations_equal_the_service_effects(app, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(app, tokens_by_role["admin"]) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == {t.name for t in TOOLS}
    for tool in TOOLS:
        a = listed[tool.name].annotations
        assert a is not None and listed[tool.name].title is None
        # What a client concludes with the spec's defaults for what was left out.
        read_only = bool(a.read_only_hint)
        got = (read_only, not read_only and a.destructive_hint in (None, True),
               read_only or bool(a.idempotent_hint), a.open_world_hint)
        want = (tool.effect is Effect.READ, tool.effect is Effect.DESTROY,
                tool.effect in (Effect.READ, Effect.MUTATE), False)
        assert got == want, tool.name
        assert listed[tool.name].input_schema == tool.advertised_schema()


async def _active_tokens(admin: httpx.AsyncClient) -> set[str]:
    return {t["name"] for t in (await admin.get("/api/v1/tokens")).json() if not t["revoked"]}


async def _audited(admin: httpx.AsyncClient, action: str) -> list[dict[str, Any]]:
    return (await admin.get("/api/v1/audit", params={"action": action})).json()  # type: ignore[no-any-return]


async def test_destructive_tool_without_confirm_is_refused(app, admin, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    await mint(app, "victim", Role.VIEWER)
    async with mcp_client(app, tokens_by_role["admin"]) as client:
        for confirm in (None, False, "yes", 1):
            args = {"name": "victim"} if confirm is None else {"name": "victim", "confirm": confirm}
            result = await client.call_tool("token_revoke", args)
            assert result.is_error
            assert structured(result)["error"]["code"] == "confirmation_required", confirm
    assert "victim" in await _active_tokens(admin)  # no REST call was made
    # ...but each refusal is audited once, as the agent face, with the confirm flag it had.
    entries = await _audited(admin, "token.revoke")
    assert [(a["face"], a["principal"], a["target"], a["result"]) for a in entries] == [
        ("agent", "t-admin", "mcp:token_revoke", "error:confirmation_required")] * 4
    assert [(a["detail"] or {}).get("flags") for a in reversed(entries)] == [
        None, {"confirm": False}, {"confirm": False}, {"confirm": False}]


async def test_hidden_tool_is_refused_by_the_server(app, admin, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    await mint(app, "victim", Role.VIEWER)
    for role in ("viewer", "operator"):
        async with mcp_client(app, tokens_by_role[role]) as client:
            result = await client.call_tool("token_revoke", {"name": "victim", "confirm": True})
        assert result.is_error
        error = structured(result)["error"]
        assert error["code"] == "forbidden"
        # refused by the control plane's one role check (the service's own message)
        assert f"'token.revoke' needs the admin role; 't-{role}' is {role}." == error["detail"]
    assert "victim" in await _active_tokens(admin)
    entries = await _audited(admin, "token.revoke")  # once each, as the agent face
    assert [(a["face"], a["principal"], a["target"], a["result"]) for a in reversed(entries)
            ] == [("agent", f"t-{role}", "/api/v1/tokens/victim", "error:forbidden")
                  for role in ("viewer", "operator")]


async def test_every_tool_refuses_a_role_below_its_service_role(app, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    for role in (Role.VIEWER, Role.OPERATOR):
        async with mcp_client(app, tokens_by_role[role.value]) as client:
            for tool in TOOLS:
                result = await client.call_tool(tool.name, required_args(tool))
                code = structured(result)["error"]["code"] if result.is_error else None
                assert (code == "forbidden") is (not role.allows(tool.role)), (tool.name, code)


async def test_invalid_arguments_are_refused_with_a_problem(app, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(app, tokens_by_role["viewer"]) as client:
        bad = await client.call_tool("audit_list", {"limit": 0})
        extra = await client.call_tool("audit_list", {"bogus": 1})
        unknown = await client.call_tool("nope_do", {})
    assert structured(bad)["error"]["code"] == "invalid_input"
    assert "limit" in structured(bad)["error"]["detail"]
    assert structured(extra)["error"]["code"] == "invalid_input"
    assert structured(unknown)["error"]["code"] == "unknown_tool"


async def test_an_unadvertised_string_rule_is_still_enforced(app, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    # tools/list leaves regexes and lengths out (ADR 0009); the server must still check them.
    listed_cluster = BY_NAME["cluster_get_status"].advertised_schema()["properties"]["name"]
    assert "pattern" not in listed_cluster
    async with mcp_client(app, tokens_by_role["viewer"]) as client:
        bad = await client.call_tool("cluster_get_status", {"name": "Not_A_Label"})
        long = await client.call_tool("cluster_get_status", {"name": "a" * 64})
    for result in (bad, long):
        error = structured(result)["error"]
        assert error["code"] == "invalid_input" and error["detail"].startswith("name:")
    assert "does not match" in structured(bad)["error"]["detail"]


async def test_tool_result_equals_the_rest_result(app, admin, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    for name in ("alpha", "beta", "gamma"):
        created = await admin.post("/api/v1/tokens", json={"name": name, "role": "viewer"})
        assert created.status_code == 201
    await admin.delete("/api/v1/tokens/beta")
    query = {"limit": 2, "action": "token.create"}
    async with mcp_client(app, tokens_by_role["admin"]) as client:
        await client.call_tool("token_list", {})  # settle last-used times before comparing
        via_rest = [(await admin.get("/api/v1/audit", params=query)).json(),
                    (await admin.get("/api/v1/tokens")).json()]
        via_mcp = [structured(await client.call_tool("audit_list", query))["result"],
                   structured(await client.call_tool("token_list", {}))["result"]]
    assert via_mcp == via_rest
    assert [a["target"] for a in via_mcp[0]] == ["token/gamma", "token/beta"]


async def test_tool_error_equals_the_rest_problem(app, admin, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    rest = await admin.delete("/api/v1/tokens/ghost")
    async with mcp_client(app, tokens_by_role["admin"]) as client:
        result = await client.call_tool("token_revoke", {"name": "ghost", "confirm": True})
    assert result.is_error
    assert rest.status_code == 404
    assert structured(result)["error"] == rest.json()


async def test_mcp_mutation_is_audited_as_the_agent_face(app, admin, tokens_by_role) -> None:  # type: ignore[no-untyped-def]
    await mint(app, "victim", Role.VIEWER)
    async with mcp_client(app, tokens_by_role["admin"]) as client:
        result = await client.call_tool("token_revoke", {"name": "victim", "confirm": True})
    assert not result.is_error
    out = structured(result)
    assert out["result"]["name"] == "victim" and out["result"]["revoked"] is True
    assert out["done"] is True
    assert "victim" not in await _active_tokens(admin)
    entries = await _audited(admin, "token.revoke")
    assert [(a["face"], a["principal"], a["target"], a["result"]) for a in entries] == [
        ("agent", "t-admin", "token/victim", "ok")]


def _face(app: Any) -> Any:
    from podplane.mcp.http import McpHttp
    return next(r.app for r in app.routes if isinstance(getattr(r, "app", None), McpHttp))


async def test_open_sessions_are_capped_per_token_and_end_on_revocation(  # type: ignore[no-untyped-def]
        app, tokens_by_role) -> None:
    """Issue 34, S5: each initialize leaves a session; a token holds at most
    PODPLANE_MCP_SESSIONS_PER_TOKEN of them (429 beyond, audited), others are not affected,
    and revoking the token ends its sessions at once instead of at their idle timeout."""
    app.state.podplane.settings.mcp_sessions_per_token = 2
    face = _face(app)
    assert face.manager.session_idle_timeout == app.state.podplane.settings.\
        mcp_session_idle_seconds == 300
    agent = await mint(app, "many-sessions", Role.VIEWER)
    async with client_for(app, agent) as c:
        codes = [(await c.post("/mcp/", json=INIT, headers=MCP_HEADERS)).status_code
                 for _ in range(3)]
    async with client_for(app, tokens_by_role["viewer"]) as other:
        assert (await other.post("/mcp/", json=INIT, headers=MCP_HEADERS)).status_code == 200
    assert codes == [200, 200, 429]
    assert len(face.manager._server_instances) == 3   # the agent's two, the other's one
    async with client_for(app, tokens_by_role["admin"]) as admin:
        assert (await admin.delete("/api/v1/tokens/many-sessions")).status_code == 200
        rows = (await admin.get("/api/v1/audit", params={"principal": "many-sessions"})).json()
    for _ in range(1000):   # the watcher wakes on the revocation, then ends them
        if len(face.manager._server_instances) == 1:
            break
        await asyncio.sleep(0)
    assert len(face.manager._server_instances) == 1
    assert [r["result"] for r in rows if r["action"] == "mcp.request"] == ["error:rate_limited"]
