"""Each tool call is exactly one REST request, built from the table row (fake HTTP at the port)."""

from __future__ import annotations

import json

import httpx
import pytest

from podplane.domain.effects import Role
from podplane.mcp.rest import Caller
from podplane.mcp.server import call
from podplane.mcp.tool import CONFIRM, Tool
from podplane.mcp.tools import BY_NAME, TOOLS
from tests.mcp.conftest import SAMPLE, required_args


class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def caller(self, role: Role = Role.ADMIN) -> Caller:
        def handler(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return httpx.Response(200, json={"ok": True})

        return Caller(role, lambda: httpx.AsyncClient(transport=httpx.MockTransport(handler),
                                                      base_url="http://cp.test"))


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
async def test_one_tool_call_is_one_rest_request(tool: Tool) -> None:
    rec = Recorder()
    result = await call(tool.name, required_args(tool), rec.caller())
    assert not result.is_error, result.structured_content
    assert len(rec.requests) == 1
    sent = rec.requests[0]
    assert sent.method == tool.method
    assert sent.url.path == tool.path.format(**SAMPLE)
    # Destructive tools forward the confirmation the MCP server checked; others have none.
    sent_confirm = CONFIRM in str(sent.url) or CONFIRM.encode() in sent.content
    assert sent_confirm is tool.needs_confirmation


async def test_defaults_and_arguments_land_where_rest_expects_them() -> None:
    rec = Recorder()
    caller = rec.caller()
    await call("operation_wait", {"operation_id": "op-1"}, caller)
    await call("operation_wait", {"operation_id": "op-1", "timeout": 5, "revision": 3}, caller)
    await call("audit_list", {"action": "token.revoke"}, caller)
    queries = [dict(r.url.params) for r in rec.requests]
    assert queries == [{"timeout": "50"}, {"timeout": "5", "revision": "3"},
                       {"limit": "100", "action": "token.revoke"}]
    assert all(r.content == b"" for r in rec.requests)


async def test_refusals_make_no_request() -> None:
    rec = Recorder()
    refused = [
        await call("token_revoke", {"name": "bot"}, rec.caller(Role.ADMIN)),
        await call("operation_wait", {"operation_id": "../../tokens"}, rec.caller(Role.ADMIN)),
        await call("operation_wait", {"operation_id": "op-1", "timeout": 600},
                   rec.caller(Role.ADMIN)),
        await call("cluster_explode", {}, rec.caller(Role.ADMIN)),
    ]
    codes = [json.loads(r.content[0].text)["error"]["code"] for r in refused]  # type: ignore[union-attr]
    assert codes == ["confirmation_required", "invalid_input", "invalid_input",
                     "unknown_tool"]
    assert rec.requests == []


async def test_a_call_above_the_role_is_the_control_planes_to_refuse() -> None:
    """The role is checked once, by the control plane, which audits the refusal: the call goes
    on as it is (even with arguments the schema would refuse), and its answer comes back."""
    rec = Recorder()
    assert BY_NAME["operation_retry_step"].role is Role.OPERATOR
    await call("operation_retry_step", {"operation_id": "op-1", "step": "touch", "x": 1},
               rec.caller(Role.VIEWER))
    assert [(r.method, r.url.path) for r in rec.requests] == [
        ("POST", "/api/v1/operations/op-1/steps/touch/retry")]
    missing_path = await call("operation_retry_step", {"step": "touch"}, rec.caller(Role.VIEWER))
    assert missing_path.is_error and len(rec.requests) == 1  # no path to send it to
