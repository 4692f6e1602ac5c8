"""gzip for the clients that ask for it, nothing in the way of those that don't.

Starlette's middleware compresses responses of `minimum_size` or more when the request's
Accept-Encoding names gzip (node lists of 1,000 nodes shrink ~20x; event streams never are).
For any other request it still wraps the response in an identity responder that parses the
headers of every response to send it unchanged: ~0.03 ms of CPU per request
(bench/request_path.py), a tenth of a cached list read. Here such a request reaches the app
directly, and its response only gains `Vary: Accept-Encoding` (RFC 9110, section 12.5.5: the
response would differ for a client that accepts gzip, so a cache must not reuse it for one).
"""

from __future__ import annotations

from starlette.middleware.gzip import GZipMiddleware
from starlette.types import Message, Receive, Scope, Send

VARY = (b"vary", b"Accept-Encoding")


class Compression(GZipMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _accepts_gzip(scope["headers"]):
            return await super().__call__(scope, receive, send)

        async def send_varied(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _varied(message.get("headers") or [])
            await send(message)

        await self.app(scope, receive, send_varied)


def _varied(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers with Accept-Encoding in their Vary (appended to one the app set)."""
    for i, (name, value) in enumerate(headers):
        if name.lower() == b"vary":
            if b"accept-encoding" in value.lower():
                return headers
            return [*headers[:i], (name, value + b", Accept-Encoding"), *headers[i + 1:]]
    return [*headers, VARY]


def _accepts_gzip(headers: list[tuple[bytes, bytes]]) -> bool:
    """As Starlette decides it: gzip anywhere in Accept-Encoding (ASGI header names are
    lower-case)."""
    return any(name == b"accept-encoding" and b"gzip" in value for name, value in headers)
