"""The Kubernetes adapter when connections fail: a keep-alive connection the server closed
while idle is resent once on a new one (Go's net/http Transport does the same for requests it
may repeat); a server that does not answer is a classified `kube_unreachable` error, never a
raw transport exception; and a reader holding a cluster's client across `forget` (a renewed
access entry, a deletion) keeps working on the new client."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from podplane.cloud.kube.client import LightkubeKube
from podplane.cloud.kube.config import EksAccess
from podplane.cloud.kube.connector import KubeConnector
from podplane.cloud.kube.eks_token import static_session
from podplane.domain.errors import CloudError
from tests.sandbox_kube.conftest import Sandbox

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": "conn", "resourceVersion": "1"}}


def _described(name: str, endpoint: str, ca: bytes) -> dict[str, Any]:
    return {"cluster": {"name": name, "endpoint": endpoint, "status": "ACTIVE",
                        "certificateAuthority": {"data": base64.b64encode(ca).decode()}}}


def _access(endpoint: str, ca: bytes, name: str = "conn") -> EksAccess:
    return EksAccess.from_describe_cluster(_described(name, endpoint, ca), "us-west-2",
                                           session=static_session("test", "test"))


async def _dropping_server(drops: int | None) -> tuple[asyncio.Server, list[int]]:
    """A plain-HTTP server that reads each request and hangs up without answering on the
    first `drops` connections (None: always), as a server closing an idle connection does;
    later ones get the Namespace."""
    seen: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        seen.append(1)
        if drops is None or len(seen) <= drops:
            writer.close()
            return
        body = json.dumps(NAMESPACE).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0), seen


def _url(server: asyncio.Server) -> str:  # plain HTTP: the CA (the sandbox's) goes unused
    return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_a_read_on_a_dropped_connection_is_sent_once_more(sandbox: Sandbox) -> None:
    server, seen = await _dropping_server(drops=1)
    kube = LightkubeKube(_access(_url(server), sandbox.api.ca_pem))
    try:
        got = await kube.get("v1", "Namespace", "conn")
    finally:
        await kube.close()
        server.close()
    assert got is not None and got["metadata"]["name"] == "conn"
    assert len(seen) == 2


async def test_a_server_that_never_answers_is_kube_unreachable(sandbox: Sandbox) -> None:
    server, seen = await _dropping_server(drops=None)
    kube = LightkubeKube(_access(_url(server), sandbox.api.ca_pem))
    try:
        with pytest.raises(CloudError) as err:
            await kube.get("v1", "Namespace", "conn")
    finally:
        await kube.close()
        server.close()
    assert err.value.code == "kube_unreachable" and err.value.retryable
    assert len(seen) == 2  # resent once, not forever


async def test_nothing_listening_is_kube_unreachable(sandbox: Sandbox) -> None:
    server, _ = await _dropping_server(drops=None)
    url = _url(server)
    server.close()
    await server.wait_closed()
    kube = LightkubeKube(_access(url, sandbox.api.ca_pem))
    try:
        with pytest.raises(CloudError) as err:
            await kube.list("v1", "Namespace")
    finally:
        await kube.close()
    assert err.value.code == "kube_unreachable"


class _Eks:
    def __init__(self, described: dict[str, Any]) -> None:
        self.described = described

    async def describe_cluster(self, name: str) -> dict[str, Any]:
        return self.described


@pytest.fixture
async def connector(sandbox: Sandbox) -> AsyncIterator[KubeConnector]:
    api = sandbox.api
    eks = _Eks(_described(api.cluster_name, api.endpoint, api.ca_pem))
    conn = KubeConnector(eks, "us-west-2")  # type: ignore[arg-type]
    conn._access = lambda name: _async(  # type: ignore[method-assign]
        _access(api.endpoint, api.ca_pem, api.cluster_name))
    yield conn
    await conn.close()


async def _async(value: Any) -> Any:
    return value


async def test_a_held_client_keeps_working_across_forget(connector: KubeConnector,
                                                         sandbox: Sandbox) -> None:
    name = sandbox.api.cluster_name
    kube = await connector.for_cluster(name)
    first = await connector.current(name)
    in_flight = asyncio.create_task(kube.list("v1", "Namespace"))
    await asyncio.sleep(0.01)  # the list is on the wire when the client is forgotten
    await connector.forget(name)
    assert {n["metadata"]["name"] for n in await in_flight} >= {"default", "kube-system"}
    assert await kube.get("v1", "Namespace", "default") is not None
    assert await connector.current(name) is not first
