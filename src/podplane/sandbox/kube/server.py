"""The emulator process piece: TLS server, store persistence, controllers, kubeconfig."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import uvicorn
import yaml

from podplane.cloud.kube.eks_token import eks_token, static_session
from podplane.sandbox.clock import VirtualClock
from podplane.sandbox.contracts import NodeSource
from podplane.sandbox.kube import addon_objects, admission, pod_identity, s3_mounts, validation
from podplane.sandbox.kube.app import build_app
from podplane.sandbox.kube.controllers.framework import Controller, Ctx, Runner
from podplane.sandbox.kube.controllers.infra import (
    GarbageCollector,
    LoadBalancerController,
    NamespaceController,
    VolumeBinder,
)
from podplane.sandbox.kube.controllers.jobs import JobController
from podplane.sandbox.kube.controllers.kubelet import Kubelet
from podplane.sandbox.kube.controllers.nodes import NodeController
from podplane.sandbox.kube.controllers.scheduler import Scheduler
from podplane.sandbox.kube.controllers.sets import DaemonSetController, StatefulSetController
from podplane.sandbox.kube.controllers.workloads import DeploymentController, ReplicaSetController
from podplane.sandbox.kube.crds import CrdManager
from podplane.sandbox.kube.resources import Registry
from podplane.sandbox.kube.store import Store, write_atomically
from podplane.sandbox.kube.tls import ensure_certs

log = logging.getLogger(__name__)
STORE_FILE = "kube-store.json"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
CONTROLLERS: list[type[Controller]] = [
    NodeController,
    Scheduler,
    Kubelet,
    ReplicaSetController,
    DeploymentController,
    DaemonSetController,
    StatefulSetController,
    JobController,
    LoadBalancerController,
    VolumeBinder,
    GarbageCollector,
    NamespaceController,
]
FLUSH_SECONDS = 5.0


class _QuietServer(uvicorn.Server):
    """The sandbox process owns signals and stops us through stop(), not Ctrl-C directly."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class KubeApiServer:
    def __init__(
        self,
        state_dir: Path,
        clock: VirtualClock,
        node_source: NodeSource,
        host: str,
        port: int,
        eks_cluster_name: str | None = None,
    ) -> None:
        self.state_dir, self.clock, self.host = Path(state_dir), clock, host
        self.cluster_name = eks_cluster_name or "podplane-sandbox"
        self._sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.port = self._sock.getsockname()[1]
        self.endpoint = f"https://{host}:{self.port}"
        self._cert, self._key, self.ca_pem = ensure_certs(self.state_dir, host)
        self.registry = Registry()
        self.store = Store(self.registry, clock)
        self.crds = CrdManager(self.registry, self.store)
        admission.install(self.store)
        pod_identity.install(self.store, node_source, eks_cluster_name)
        self.store.validators.append(validation.validate)
        self.store.load(self.state_dir / STORE_FILE, self.crds.register)
        self.ctx = Ctx(self.store, clock, node_source)
        self.controllers = [cls(self.ctx) for cls in CONTROLLERS]
        self.controllers += addon_objects.controllers(self.ctx, node_source, eks_cluster_name)
        s3_mounts.install(self.ctx, node_source, eks_cluster_name)
        for ctrl in self.controllers:
            if isinstance(ctrl, NodeController):
                ctrl.eks_cluster_name = eks_cluster_name
        self.runner = Runner(self.ctx, self.controllers)
        self._server: uvicorn.Server | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def kubeconfig_path(self) -> Path:
        return self.state_dir / "kubeconfig"

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        rt = self.registry.by_key("namespaces")
        assert rt is not None
        for ns in SYSTEM_NAMESPACES:
            if self.store.find("namespaces", "", ns) is None:
                self.store.create(rt, {"metadata": {"name": ns}})
        await self.runner.start()
        config = uvicorn.Config(
            build_app(self.store, self.crds, f"{self.host}:{self.port}"),
            ssl_certfile=str(self._cert),
            ssl_keyfile=str(self._key),
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = _QuietServer(config)
        self._sock.listen(256)
        self._tasks.append(asyncio.create_task(self._server.serve(sockets=[self._sock])))
        self._tasks.append(asyncio.create_task(self._flush_loop()))
        while not self._server.started:
            if self._tasks[0].done():
                self._tasks[0].result()
            await asyncio.sleep(0.01)
        self.write_kubeconfig()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        await self.runner.stop()
        for task in self._tasks[1:]:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        self.store.save(self.state_dir / STORE_FILE)
        self._sock.close()

    async def settle(self) -> None:
        """Run every controller until nothing is due at the current virtual time."""
        await self.runner.settle()

    async def flush(self) -> None:
        """Write the object store to disk (done every few seconds while it changes)."""
        text = self.store.snapshot()
        await asyncio.to_thread(write_atomically, self.state_dir / STORE_FILE, text)

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            if self.store.dirty:
                await self.flush()

    def token(self) -> str:
        return eks_token(
            self.cluster_name, session=static_session("AKIASANDBOXKUBE0000", "sandbox")
        )

    def write_kubeconfig(self) -> Path:
        name = self.cluster_name
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": name,
            "preferences": {},
            "clusters": [
                {
                    "name": name,
                    "cluster": {
                        "server": self.endpoint,
                        "certificate-authority-data": base64.b64encode(self.ca_pem).decode(),
                    },
                }
            ],
            "users": [{"name": name, "user": {"token": self.token()}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        }
        self.kubeconfig_path.write_text(yaml.safe_dump(config, sort_keys=False))
        self.kubeconfig_path.chmod(0o600)
        return self.kubeconfig_path
