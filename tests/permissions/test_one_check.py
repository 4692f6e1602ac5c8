"""One action, one role check, one audit row: whether REST or MCP refuses or allows it.

The role is checked only by the service layer (services.registry): REST admits the call before
it reads a body, the service then does not check again, and an MCP call above the caller's
role is sent on for the control plane to refuse. Each row below is one request; the test
counts the role checks it caused and the audit rows it wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from podplane.domain.effects import Role
from podplane.mcp import server as mcp_server
from podplane.mcp.http import McpHttp
from podplane.services import registry
from tests.permissions.test_authorization import (  # noqa: F401  (module fixtures)
    A,
    O,
    V,
    _as,
    _audit,
    _mounted_caller,
    client,
    tokens,
)

CLUSTER = {"name": "fresh", "region": "us-west-2", "availability_zone": "us-west-2a",
           "instance_type": "ml.g5.8xlarge", "count": 1, "capacity_type": "on-demand"}
# (role, method, path, body) -> (status, audit result or None for no row)
REST = [
    (V, "POST", "/api/v1/tokens", {"name": "once", "role": "viewer"}, 403, "error:forbidden"),
    (A, "POST", "/api/v1/tokens", {"name": "once", "role": "viewer"}, 201, "ok"),
    (O, "DELETE", "/api/v1/tokens/once", None, 403, "error:forbidden"),
    (V, "POST", "/api/v1/clusters", {}, 403, "error:forbidden"),  # 403 before the body's 422
    (O, "POST", "/api/v1/clusters/import", {"name": "outside"}, 403, "error:forbidden"),
    (V, "GET", "/api/v1/audit", None, 200, None),  # an allowed read writes no row
    (A, "GET", "/api/v1/tokens", None, 200, None),
    (A, "DELETE", "/api/v1/tokens/once", None, 200, "ok"),
]
# (role, tool, args) -> (error code or None, audit result or None, role checks)
MCP = [
    (V, "token_revoke", {"name": "nobody", "confirm": True}, "forbidden", "error:forbidden", 1),
    (O, "cluster_import", {"name": "outside"}, "forbidden", "error:forbidden", 1),
    (A, "token_list", {}, None, None, 1),
    (V, "audit_list", {}, None, None, 1),
    # a destroy without confirm is refused by the MCP face before any REST call: no role is
    # needed to say so, and it is audited once
    (A, "token_revoke", {"name": "nobody"}, "confirmation_required",
     "error:confirmation_required", 0),
]


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every role check the service layer makes (registry.require), by action."""
    made: list[str] = []
    real = registry.require

    def counting(ctx: Any, needed: Role, action: str) -> None:
        made.append(action)
        real(ctx, needed, action)

    monkeypatch.setattr(registry, "require", counting)
    yield made


def _counted(checks: list[str], c: TestClient, toks: dict[Role, str],
             act: Callable[[], Any]) -> tuple[Any, int, list[dict[str, Any]]]:
    """What `act` answered, the role checks it caused, and the audit rows it wrote."""
    last = max((a["id"] for a in _audit(c, toks)), default=0)
    checks.clear()
    answer = act()
    made = len(checks)
    return answer, made, [a for a in _audit(c, toks) if a["id"] > last]


def test_rest_one_role_check_and_one_row_per_action(
    client: TestClient, tokens: dict[Role, str], checks: list[str],  # noqa: F811
) -> None:
    for role, method, path, body, status, result in REST:
        def send(method: str = method, path: str = path, body: Any = body,
                 role: Role = role) -> Any:
            return client.request(method, path, json=body, headers=_as(tokens, role))

        r, made, rows = _counted(checks, client, tokens, send)
        where = (role.value, method, path)
        assert r.status_code == status, (where, r.text)
        assert made == 1, (where, checks)
        assert [(a["result"], a["face"], a["principal"]) for a in rows] == (
            [(result, "api", f"authz-{role.value}")] if result else []), where


def test_mcp_one_role_check_and_one_row_per_action(
    client: TestClient, tokens: dict[Role, str], checks: list[str],  # noqa: F811
) -> None:
    face = McpHttp(client.app, client.app.state.podplane)
    assert client.portal is not None
    portal = client.portal

    def call(role: Role, name: str, args: dict[str, Any]) -> Callable[[], Any]:
        async def go() -> Any:
            return await mcp_server.call(name, args, await _mounted_caller(face, tokens[role]))

        def run() -> Any:
            return portal.call(go)
        return run

    for role, name, args, code, result, expected_checks in MCP:
        out, made, rows = _counted(checks, client, tokens, call(role, name, args))
        got = (out.structured_content or {}).get("error", {}).get("code") \
            if out.is_error else None
        where = (role.value, name)
        assert got == code, (where, out.structured_content)
        assert made == expected_checks, (where, checks)
        assert [(a["result"], a["face"], a["principal"]) for a in rows] == (
            [(result, "agent", f"authz-{role.value}")] if result else []), where



def test_an_admission_covers_only_its_own_action(
    client: TestClient,  # noqa: F811
) -> None:
    """A Ctx the registry admitted for one action (a viewer's audit read) is checked afresh by
    any other service: admission skips the repeat of a check, never a different one."""
    from podplane.domain.errors import Forbidden
    from podplane.domain.principal import Principal
    from podplane.services.access import audit
    from podplane.services.access import tokens as token_svc
    from podplane.services.context import Ctx

    viewer = Principal(name="authz-viewer", role=Role.VIEWER, token_id="t-v", face="api")
    admitted = registry.admit(Ctx(principal=viewer, app=client.app.state.podplane),
                              registry.effect_of(audit.list_audit))

    async def escalate() -> None:
        await token_svc.create_token(admitted, "sneaky", Role.ADMIN)

    assert client.portal is not None
    with pytest.raises(Forbidden, match="'token.create' needs the admin role"):
        client.portal.call(escalate)
    with pytest.raises(Forbidden):  # and a viewer is never admitted above their role
        registry.admit(Ctx(principal=viewer, app=client.app.state.podplane),
                       registry.effect_of(token_svc.create_token))
