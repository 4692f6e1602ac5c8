"""Request-size limit, enforced before a body is read. (Per-token rate and caps:
services.access.limits.)"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from podplane.api.problems import problem


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            return await self._reject(scope, receive, send)
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await self._reject(scope, receive, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem(413, "payload_too_large", "Payload too large",
                           f"Request bodies are limited to {self.max_bytes} bytes.")
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass

