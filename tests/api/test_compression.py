"""Compression: gzip only for a client that accepts it, and `Vary: Accept-Encoding` either way
(RFC 9110, section 12.5.5), so a shared cache never hands a gzip body to a client that did not
ask for one, nor the plain body where gzip was asked."""

from __future__ import annotations

import gzip

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from podplane.api.compression import Compression

BIG = "x" * 4096


def _app() -> Compression:
    async def big(_: Request) -> PlainTextResponse:
        return PlainTextResponse(BIG)

    async def varied(_: Request) -> PlainTextResponse:
        return PlainTextResponse(BIG, headers={"Vary": "Origin"})

    inner = Starlette(routes=[Route("/big", big), Route("/varied", varied)])
    return Compression(inner, minimum_size=1024, compresslevel=5)


async def _get(path: str, encoding: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get(path, headers={"Accept-Encoding": encoding})


async def test_a_client_that_accepts_gzip_gets_it() -> None:
    r = await _get("/big", "gzip, deflate")
    assert r.headers["content-encoding"] == "gzip"
    assert int(r.headers["content-length"]) < len(gzip.compress(BIG.encode())) * 2 < len(BIG)
    assert r.text == BIG and r.headers["vary"] == "Accept-Encoding"


async def test_a_client_that_does_not_gets_the_body_as_is_with_vary() -> None:
    r = await _get("/big", "identity")
    assert "content-encoding" not in r.headers
    assert r.content == BIG.encode() and int(r.headers["content-length"]) == len(BIG)
    assert r.headers.get_list("vary") == ["Accept-Encoding"]


async def test_a_response_that_varies_already_gains_accept_encoding_in_its_one_vary() -> None:
    for encoding in ("identity", "gzip"):
        r = await _get("/varied", encoding)
        assert r.headers.get_list("vary") == ["Origin, Accept-Encoding"], encoding
