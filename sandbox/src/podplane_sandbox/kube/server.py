"""The emulator process piece: TLS server, store persistence, controllers, kubeconfig."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
import yaml

from podplane.cloud.kube.eks_token import eks_token, static_session
from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.contracts import SANDBOX_KEY, SANDBOX_SECRET, AccessSource, NodeSource
from podplane_sandbox.kube import (
    addon_objects,
    admission,
    mlflow_runs,
    pod_identity,
    s3_mounts,
    validation,
)
from podplane_sandbox.kube.app import build_app
from podplane_sandbox.kube.controllers import inference_operator, karpenter, keda, keda_prometheus
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Runner
from podplane_sandbox.kube.controllers.hpa import HorizontalPodAutoscaler
from podplane_sandbox.kube.controllers.infra import (
    GarbageCollector,
    LoadBalancerController,
    NamespaceController,
    VolumeBinder,
)
from podplane_sandbox.kube.controllers.jobs import JobController
from podplane_sandbox.kube.controllers.keda_serving import ApiServiceAvailability
from podplane_sandbox.kube.controllers.kubeflow_training import KubeflowPyTorchJobs
from podplane_sandbox.kube.controllers.kubelet import Kubelet
from podplane_sandbox.kube.controllers.kuberay import RayJobs
from podplane_sandbox.kube.controllers.kuberay_cluster import RayClusters
from podplane_sandbox.kube.controllers.nccl import NcclTests
from podplane_sandbox.kube.controllers.nodes import NodeController
from podplane_sandbox.kube.controllers.scheduler import Scheduler
from podplane_sandbox.kube.controllers.sets import DaemonSetController, StatefulSetController
from podplane_sandbox.kube.controllers.training_operator import TrainingOperator
from podplane_sandbox.kube.controllers.workloads import DeploymentController, ReplicaSetController
from podplane_sandbox.kube.controllers.workspaces import Workspaces
from podplane_sandbox.kube.controllers.workspaces import install as install_workspaces
from podplane_sandbox.kube.crds import CrdManager
from podplane_sandbox.kube.gate import Gate, StandaloneAccess
from podplane_sandbox.kube.resources import Registry
from podplane_sandbox.kube.store import Store, write_atomically
from podplane_sandbox.kube.tls import ensure_certs
from podplane_sandbox.tally import note

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
    HorizontalPodAutoscaler,
    ApiServiceAvailability,
    JobController,
    TrainingOperator,
    KubeflowPyTorchJobs,
    RayJobs,
    RayClusters,
    Workspaces,
    NcclTests,
    LoadBalancerController,
    VolumeBinder,
    GarbageCollector,
    NamespaceController,
]
FLUSH_SECONDS = 5.0
KUBECONFIG_REFRESH_SECONDS = 300.0  # EKS tokens live 15 minutes


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
        access: AccessSource | None = None,
        own_sts_hosts: frozenset[str] = frozenset(),
    ) -> None:
        self.state_dir, self.clock, self.host = Path(state_dir), clock, host
        self.cluster_name = eks_cluster_name or "podplane-sandbox"
        self.access: AccessSource = access or StandaloneAccess()
        self.own_sts_hosts = own_sts_hosts
        self._sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self._sock.listen(256)  # clients that come before start() wait in the backlog
        self.port = self._sock.getsockname()[1]
        self.endpoint = f"https://{host}:{self.port}"
        self._cert, self._key, self.ca_pem = ensure_certs(self.state_dir, host)
        self.registry = Registry()
        self.store = Store(self.registry, clock)
        self.crds = CrdManager(self.registry, self.store)
        admission.install(self.store)
        install_workspaces(self.store)
        pod_identity.install(self.store, node_source, eks_cluster_name)
        self.store.validators.append(validation.validate)
        self.store.load(self.state_dir / STORE_FILE, self.crds.register)
        self.ctx = Ctx(self.store, clock, node_source)
        self.controllers = [cls(self.ctx) for cls in CONTROLLERS]
        self.controllers += addon_objects.controllers(self.ctx, node_source, eks_cluster_name)
        self.controllers += karpenter.controllers(self.ctx, node_source, eks_cluster_name)
        self.controllers += inference_operator.controllers(self.ctx, node_source, eks_cluster_name)
        self.controllers += keda.controllers(self.ctx)
        keda_prometheus.install(self.ctx, node_source, eks_cluster_name)
        s3_mounts.install(self.ctx, node_source, eks_cluster_name)
        mlflow_runs.install(self.ctx, node_source, eks_cluster_name)
        for ctrl in self.controllers:
            if isinstance(ctrl, NodeController):
                ctrl.eks_cluster_name = eks_cluster_name
        self.runner = Runner(self.ctx, self.controllers)
        self._server: uvicorn.Server | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self._kubeconfig_at = 0.0

    @property
    def kubeconfig_path(self) -> Path:
        return self.state_dir / "kubeconfig"

    async def start(self) -> None:
        note("kube_start")
        self.loop = asyncio.get_running_loop()
        rt = self.registry.by_key("namespaces")
        assert rt is not None
        for ns in SYSTEM_NAMESPACES:
            if self.store.find("namespaces", "", ns) is None:
                self.store.create(rt, {"metadata": {"name": ns}})
        await self.runner.start()
        app = build_app(self.store, self.crds, f"{self.host}:{self.port}")
        config = uvicorn.Config(
            Gate(app, self.store, self.cluster_name, self.access, self.own_sts_hosts),
            ssl_certfile=str(self._cert),
            ssl_keyfile=str(self._key),
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = _QuietServer(config)
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
            if time.time() - self._kubeconfig_at > KUBECONFIG_REFRESH_SECONDS:
                self.write_kubeconfig()

    def token(self) -> str:
        """A token of the sandbox's default identity (valid 15 minutes, like EKS's)."""
        session = static_session(SANDBOX_KEY, SANDBOX_SECRET)
        return eks_token(self.cluster_name, "us-west-2", session=session)

    def kubeconfig_parts(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """(cluster, user, context) entries of a kubeconfig for this cluster."""
        name = self.cluster_name
        cluster = {"name": name, "cluster": {
            "server": self.endpoint,
            "certificate-authority-data": base64.b64encode(self.ca_pem).decode()}}
        user = {"name": name, "user": {"token": self.token()}}
        return cluster, user, {"name": name, "context": {"cluster": name, "user": name}}

    def write_kubeconfig(self) -> Path:
        """This cluster's kubeconfig, its token rewritten before it expires (kubectl reads
        the file on every run)."""
        write_kubeconfig(self.kubeconfig_path, [self.kubeconfig_parts()], self.cluster_name)
        self._kubeconfig_at = time.time()
        return self.kubeconfig_path


def write_kubeconfig(path: Path, parts: list[tuple[dict[str, Any], ...]], current: str) -> None:
    config = {"apiVersion": "v1", "kind": "Config", "current-context": current,
              "preferences": {}, "clusters": [p[0] for p in parts],
              "users": [p[1] for p in parts], "contexts": [p[2] for p in parts]}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(config, sort_keys=False))
    tmp.chmod(0o600)
    tmp.replace(path)
