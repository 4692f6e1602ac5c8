"""The one way a tool reaches the backend: a REST call with the caller's own token.

Mounted, the call goes in-process through `httpx.ASGITransport`; as `podplane mcp` (stdio)
it goes over HTTP. Either way REST validation, auth and audit apply unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from podplane.domain.effects import Role
from podplane.services.access.auth import acting_for_mcp

FACE_HEADER = "X-Podplane-Face"
AGENT = "agent"
# operation_wait long-polls up to ~50 s; leave room for the answer to travel.
REST_TIMEOUT = httpx.Timeout(10.0, read=75.0)


# (action, target, problem, flags) of a refused tool call.
Refused = Callable[[str, str, dict[str, Any], dict[str, bool]], Awaitable[None]]


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return self.status < 400


@dataclass(frozen=True)
class Caller:
    """Who is calling (their role decides what they see) and how their REST calls travel."""

    role: Role
    new_client: Callable[[], httpx.AsyncClient]
    # Audits a refusal the MCP server makes itself (a missing confirm, a malformed argument):
    # mounted, into the audit log; None over stdio, where such a refusal never leaves the
    # user's machine. A call the role forbids is always the control plane's to refuse.
    refused: Refused | None = None

    async def send(
        self, method: str, path: str, query: dict[str, Any], body: dict[str, Any] | None
    ) -> Reply:
        try:
            async with self.new_client() as client:
                r = await client.request(method, path, params=query or None, json=body)
        except httpx.HTTPError as e:
            return Reply(503, problem(
                503, "control_plane_unreachable",
                f"Could not reach the control plane: {type(e).__name__}.",
                "Check that `podplane serve` runs and PODPLANE_URL points at it."))
        return Reply(r.status_code, _body(r))


def agent_headers(token: str) -> dict[str, str]:
    # The face header is informational only: the server derives the face from how the caller
    # authenticated (services.access.auth), so over HTTP (stdio) these calls count as `api`.
    return {"Authorization": f"Bearer {token}", FACE_HEADER: AGENT}


class _McpTransport(httpx.ASGITransport):
    """In-process REST calls of a mounted MCP tool: the token acts through the `agent` face.
    ASGITransport runs the app in the calling task, so the context variable reaches auth."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with acting_for_mcp():
            return await super().handle_async_request(request)


def in_process_client(app: Any, token: str) -> httpx.AsyncClient:
    # A server error must reach the agent as the REST problem it produced, not as an exception.
    transport = _McpTransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://podplane.local",
                             headers=agent_headers(token), timeout=REST_TIMEOUT)


def remote_client(url: str, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url.rstrip("/"), headers=agent_headers(token),
                             timeout=REST_TIMEOUT)


def _body(r: httpx.Response) -> Any:
    if not r.content:
        return None
    try:
        return r.json()
    except ValueError:
        return problem(r.status_code, "unexpected_response", r.text[:500], None)


def problem(status: int, code: str, detail: str, hint: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"status": status, "code": code, "detail": detail}
    if hint:
        out["hint"] = hint
    return out
