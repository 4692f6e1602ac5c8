"""The MCP sessions each token holds open (issue 34, S5): capped per token, closed when the
token is revoked. Each `initialize` leaves a stateful session in the SDK's session manager
until it idles out; without a cap one token could hold tens of thousands of them.

The SDK (mcp 2.x, `StreamableHTTPSessionManager`) keeps its live sessions in
`_server_instances` and ends one with `_discard_session`: the only two private names used,
here and nowhere else (tests/mcp/test_http_face.py exercises both).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from podplane.services.access import auth as auth_service
from podplane.services.access.limits import HOLD_RETRY_AFTER, RateLimited
from podplane.services.context import AppState

SESSION_HEADER = b"mcp-session-id"


class TokenSessions:
    def __init__(self, manager: StreamableHTTPSessionManager, state: AppState) -> None:
        self.manager, self.state = manager, state
        self.by_token: dict[str, set[str]] = {}
        self.opening: Counter[str] = Counter()
        self.watchers: dict[str, asyncio.Task[None]] = {}

    def _alive(self) -> dict[str, Any]:
        return self.manager._server_instances  # noqa: SLF001 (see the module docstring)

    def live(self, token_id: str) -> set[str]:
        alive = self._alive()
        ids = {s for s in self.by_token.get(token_id, ()) if s in alive}
        if ids:
            self.by_token[token_id] = ids
        else:
            self.by_token.pop(token_id, None)
        return ids

    @contextlib.contextmanager
    def opening_one(self, token_id: str) -> Iterator[None]:
        """Admit a request that opens a session (no session id yet), refused at the cap."""
        cap = self.state.settings.mcp_sessions_per_token
        if len(self.live(token_id)) + self.opening[token_id] >= cap:
            raise RateLimited(f"This token already holds {cap} open MCP sessions; end one "
                              "(DELETE /mcp/ with its mcp-session-id) or let it idle out.",
                              hint=f"Retry after {HOLD_RETRY_AFTER} s.",
                              retry_after=HOLD_RETRY_AFTER)
        self.opening[token_id] += 1
        try:
            yield
        finally:
            self.opening[token_id] -= 1
            if self.opening[token_id] <= 0:
                del self.opening[token_id]

    def opened(self, token_id: str, headers: list[tuple[bytes, bytes]]) -> None:
        """Note the session a response opened (its mcp-session-id header), if any."""
        sid = next((v.decode() for k, v in headers if k.lower() == SESSION_HEADER), None)
        if sid is None:
            return
        self.by_token.setdefault(token_id, set()).add(sid)
        if token_id not in self.watchers:
            self.watchers[token_id] = asyncio.create_task(self._close_when_revoked(token_id))

    async def _close_when_revoked(self, token_id: str) -> None:
        try:
            await auth_service.until_revoked(self.state, token_id)
            for sid in self.live(token_id):
                transport = self._alive().get(sid)
                if transport is not None:
                    await self.manager._discard_session(sid, transport)  # noqa: SLF001
            self.by_token.pop(token_id, None)
        finally:
            self.watchers.pop(token_id, None)

    async def close(self) -> None:
        for task in list(self.watchers.values()):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
