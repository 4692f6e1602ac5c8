"""WebSockets to applications through the API server's Service proxy.

kube-apiserver's proxy subresource is upgrade-aware: it authenticates and authorizes the
handshake like any GET of `services/proxy`, then splices the two connections (kubernetes
pkg/registry/core/service/proxy.go, k8s.io/apimachinery pkg/util/proxy/upgradeaware.go).
`websockets` speaks RFC 6455 over TLS verified against the cluster's own CA, with the EKS token
signed for this connection.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Sequence
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from podplane.cloud.kube.config import EksAccess
from podplane.domain.errors import CloudError

MAX_MESSAGE = 16 * 1024 * 1024   # one kernel message (a notebook's output) at most
OPEN_SECONDS = 30.0


class Socket:
    def __init__(self, connection: ClientConnection) -> None:
        self._connection = connection
        self.subprotocol: str | None = connection.subprotocol

    async def send(self, message: str | bytes) -> None:
        await self._connection.send(message)

    async def messages(self) -> AsyncIterator[str | bytes]:
        with contextlib.suppress(ConnectionClosed):   # closed either way: the stream ends
            async for message in self._connection:
                yield message


@contextlib.asynccontextmanager
async def proxy_socket(access: EksAccess, namespace: str, service: str, port: int, path: str,
                       subprotocols: Sequence[str]) -> AsyncIterator[Socket]:
    base = urlsplit(access.endpoint)
    url = (f"wss://{base.netloc}/api/v1/namespaces/{namespace}/services/{service}:{port}"
           f"/proxy/{path}")
    tls = ssl.create_default_context(cadata=access.ca_pem.decode())
    try:
        connection = await connect(
            url, ssl=tls, additional_headers={"Authorization": f"Bearer {access.token()}"},
            subprotocols=[*subprotocols] or None,  # type: ignore[list-item]
            max_size=MAX_MESSAGE, open_timeout=OPEN_SECONDS, compression=None)
    except InvalidStatus as refused:
        raise _refused(refused.response.status_code) from refused
    except (OSError, TimeoutError, InvalidHandshake) as exc:
        raise CloudError(f"The cluster's Kubernetes API did not open the WebSocket: "
                         f"{type(exc).__name__}: {exc}", code="kube_unreachable",
                         retryable=True, http_status=503) from exc
    async with connection:
        yield Socket(connection)


def _refused(status: int) -> CloudError:
    """The application's (or the API server's) answer to the handshake, passed on: a 4xx or a
    503 (nothing ready behind the Service) as it is, anything else as a bad gateway."""
    err = CloudError(f"The WebSocket was refused with HTTP {status}.", code="socket_refused",
                     retryable=status == 503)
    err.status = status if 400 <= status < 500 or status == 503 else 502
    return err
