"""One Kubernetes API server per ACTIVE EKS cluster, as EKS gives each cluster its own.

Each server has its own endpoint (port), CA, object store and controllers, under
`<sandbox>/kube/<cluster>/`. A server is made when its EKS cluster turns ACTIVE (or when
DescribeCluster first asks for it, e.g. after a restart) and removed with its store when the
cluster is deleted. Ports: the one a cluster had before a restart when it is still free, else
the first free port from `first_port` up (`--kube-port`); 0 means any free port.

`ensure()` is called from AWS request threads and from the event loop alike: it binds the
socket at once (clients that connect early wait in the backlog) and starts the server on the
loop without waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.contracts import AccessSource, NodeSource
from podplane_sandbox.kube.server import write_kubeconfig

log = logging.getLogger(__name__)
PORT_SCAN = 200  # how far above --kube-port a new cluster's port may be
REFRESH_SECONDS = 300.0  # real seconds between kubeconfig rewrites (fresh tokens)


class ClusterServer(Protocol):
    endpoint: str
    ca_pem: bytes
    cluster_name: str

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def settle(self) -> None: ...
    def kubeconfig_parts(self) -> tuple[dict[str, Any], ...]: ...


Factory = Callable[..., ClusterServer]


class KubeFleet:
    def __init__(self, folder: Path, clock: VirtualClock, node_source: NodeSource,
                 access: AccessSource, host: str, first_port: int, factory: Factory,
                 own_sts_hosts: frozenset[str] = frozenset()) -> None:
        self.folder, self.clock, self.node_source, self.access = folder, clock, node_source, access
        self.host, self.first_port, self.factory = host, first_port, factory
        self.own_sts_hosts = own_sts_hosts
        self.servers: dict[str, ClusterServer] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[ClusterServer] = []
        self._tasks: set[Any] = set()
        self._lock = threading.RLock()
        self._refresher: Any = None
        self._current: str | None = None  # the kubeconfig's current context

    @property
    def kubeconfig_path(self) -> Path:
        """Every cluster's context in one file (`KUBECONFIG` in the sandbox env file)."""
        return self.folder / "kubeconfig"

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self.loop = loop
            pending, self._pending = self._pending, []
        for server in pending:
            self._run(self._start(server))
        self._refresher = asyncio.run_coroutine_threadsafe(self._refresh(), loop)

    def ensure(self, cluster: str) -> tuple[str, bytes]:
        """(endpoint, CA PEM) of the cluster's API server, made on first use."""
        with self._lock:
            server = self.servers.get(cluster)
            if server is None:
                server = self.servers[cluster] = self._make(cluster)
                if self.loop is None:
                    self._pending.append(server)
                else:
                    self._run(self._start(server))
            return server.endpoint, server.ca_pem

    def get(self, cluster: str) -> ClusterServer | None:
        """The running server of an EKS cluster (for bridges that write objects into it)."""
        return self.servers.get(cluster)

    def forget(self, cluster: str) -> None:
        """The EKS cluster is gone: stop its server and drop its store."""
        with self._lock:
            server = self.servers.pop(cluster, None)
        if server is not None:
            self._run(self._drop(server))

    async def settle(self) -> None:
        """Let every server's controllers catch up with the clock (after pending starts)."""
        await self.ready()
        for server in list(self.servers.values()):
            await server.settle()

    def settle_from_thread(self, timeout: float = 30.0) -> None:
        """Block the calling thread until the controllers have done what is due now; the
        control API calls it before the clock jumps (docs/sandbox.md, "Control API"). Nothing
        to do before the fleet has a loop, and its own loop must not wait on itself."""
        loop = self.loop
        if loop is None or not loop.is_running() or _running_loop() is loop:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.settle(), loop).result(timeout)
        except TimeoutError:  # a huge backlog: jump anyway rather than stall the clock
            log.warning("controllers not settled within %.0f s of a clock advance", timeout)

    async def stop(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
        await self.ready()
        for server in list(self.servers.values()):
            await server.stop()

    async def _refresh(self) -> None:
        """Rewrite the shared kubeconfig before its tokens expire (EKS: 15 minutes)."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            if self.servers:
                self.write_kubeconfig(self._current)

    async def ready(self) -> None:
        for task in list(self._tasks):  # starts and drops scheduled from other threads
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(task)

    def write_kubeconfig(self, current: str | None = None) -> Path:
        servers = sorted(self.servers.values(), key=lambda s: s.cluster_name)
        if not servers:
            self.kubeconfig_path.unlink(missing_ok=True)
            return self.kubeconfig_path
        name = current if current in self.servers else servers[-1].cluster_name
        self._current = name
        write_kubeconfig(self.kubeconfig_path, [s.kubeconfig_parts() for s in servers], name)
        return self.kubeconfig_path

    # internals ---------------------------------------------------------------------------
    def _make(self, cluster: str) -> ClusterServer:
        state_dir = self.folder / "kube" / cluster
        state_dir.mkdir(parents=True, exist_ok=True)
        port_file = state_dir / "port"
        for port in self._candidate_ports(port_file):
            try:
                server = self.factory(state_dir, self.clock, self.node_source, self.host, port,
                                      eks_cluster_name=cluster, access=self.access,
                                      own_sts_hosts=self.own_sts_hosts)
            except OSError:
                continue  # taken: try the next one
            port_file.write_text(str(server.endpoint.rsplit(":", 1)[1]))
            log.info("Kubernetes API of EKS cluster %s on %s", cluster, server.endpoint)
            return server
        raise OSError(f"no free port from {self.first_port} for cluster {cluster}")

    def _candidate_ports(self, port_file: Path) -> list[int]:
        used = {int(s.endpoint.rsplit(":", 1)[1]) for s in self.servers.values()}
        before = [int(port_file.read_text())] if port_file.exists() else []
        if self.first_port == 0:
            return [p for p in before if p not in used] + [0]
        scan = range(self.first_port, self.first_port + PORT_SCAN)
        return [p for p in (*before, *scan) if p not in used]

    def _run(self, coro: Coroutine[Any, Any, None]) -> None:
        assert self.loop is not None
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        self._tasks.add(future)
        future.add_done_callback(self._tasks.discard)

    async def _start(self, server: ClusterServer) -> None:
        try:
            await server.start()
        except Exception:
            log.exception("the Kubernetes API of %s did not start", server.cluster_name)
            return
        self.write_kubeconfig(server.cluster_name)

    async def _drop(self, server: ClusterServer) -> None:
        await server.stop()
        self.write_kubeconfig()
        shutil.rmtree(self.folder / "kube" / server.cluster_name, ignore_errors=True)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
