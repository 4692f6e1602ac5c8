"""The sandbox process: AWS endpoint (+ optionally the Kubernetes API), state on disk, env file.

`Sandbox` is usable in-process (tests) and by `podplane sandbox` (its own process).
`kube_factory(state_dir, clock, node_source, host, port, eks_cluster_name=, access=,
own_sts_hosts=)` makes one Kubernetes API server (`async start()` / `async stop()`); the
KubeFleet calls it once per ACTIVE EKS cluster, from `kube_port` up.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

from podplane.cloud.sandbox_secret import SECRET_ENV, control_headers, sandbox_secret
from podplane_sandbox.aws import moto_side
from podplane_sandbox.aws.amp import AmpEmulator
from podplane_sandbox.aws.eks import EksEmulator
from podplane_sandbox.aws.eks.access import KubeAccess
from podplane_sandbox.aws.fsx import FsxEmulator
from podplane_sandbox.aws.hyperpod import HyperPodEmulator
from podplane_sandbox.aws.kube_view import KubeView
from podplane_sandbox.aws.mlflow import MlflowEmulator
from podplane_sandbox.aws.quotas import QuotasEmulator
from podplane_sandbox.aws.router import AwsRouter
from podplane_sandbox.aws.world import KubeTarget, World
from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.contracts import NodeSource
from podplane_sandbox.control import ControlApi
from podplane_sandbox.guard import Guard, new_secret, private_tree, write_private
from podplane_sandbox.kube.fleet import KubeFleet
from podplane_sandbox.state import StateStore
from podplane_sandbox.tally import note

log = logging.getLogger("podplane_sandbox")
DEFAULT_SPEED = 60.0  # EKS + HyperPod (with deep health checks) in about 1.5 real minutes
TEST_KEY = "test"
REGION = "us-west-2"


def _secret(folder: Path) -> str:
    """The control secret: PODPLANE_SANDBOX_SECRET when given, else the one the env file kept
    from an earlier run (clients holding it keep working), else a new random one."""
    return sandbox_secret(folder) or new_secret()


KubeFactory = Callable[..., Any]


class Sandbox:
    def __init__(self, home: Path, host: str = "127.0.0.1", aws_port: int = 4566,
                 kube_port: int = 6443, speed: float = DEFAULT_SPEED, seed: int = 0,
                 kube_endpoint: str | None = None,
                 kube_factory: KubeFactory | None = None, lag: bool = True) -> None:
        self.folder = home / "sandbox"
        private_tree(home, self.folder)
        self.host, self.aws_port, self.kube_port = host, aws_port, kube_port
        self.clock = VirtualClock(speed=speed)
        kube = KubeTarget(kube_endpoint or f"https://{host}:{kube_port}",
                          self.folder / "kube-ca.crt")
        self.world = World(self.clock, seed=seed, region=REGION, kube=kube, lag=lag)
        self.world.subnet_azs = moto_side.subnet_az
        self.eks = EksEmulator(self.world)
        self.hyperpod = HyperPodEmulator(self.world)
        self.quotas = QuotasEmulator(self.world)
        self.fsx = FsxEmulator(self.world)
        self.amp = AmpEmulator(self.world)
        self.mlflow = MlflowEmulator(self.world)
        # nodes, add-ons, Pod Identity, S3 and registry reachability, as Kubernetes sees them
        self.kube_view = KubeView(self.hyperpod, self.eks, self.world)
        self.store = StateStore(self.folder, self.world)
        self.kube_factory = kube_factory
        self.kube: KubeFleet | None = None  # one Kubernetes API server per ACTIVE EKS cluster
        if kube_factory is not None:
            self.kube = KubeFleet(self.folder, self.clock, self.kube_view,
                                  KubeAccess(self.world), host, kube_port, kube_factory)
            self.world.kube.servers = self.kube
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.secret = _secret(self.folder)

    @property
    def node_source(self) -> NodeSource:
        return self.kube_view

    @property
    def aws_url(self) -> str:
        return f"http://{self.host}:{self.aws_port}"

    def start(self) -> None:
        """Load state, then serve the AWS endpoint on a background thread."""
        restored = self.store.load()
        if not restored:  # a fresh account: moto is process-global, so clear what it holds
            moto_side.reset(self.world.seed)
        control = ControlApi(self.world, self.hyperpod, self.store.save, self.reset,
                             before_jump=self._settle_kube)
        guard = Guard(self.secret)
        app = AwsRouter(self.world, self.eks, self.hyperpod, self.quotas, moto_side.make_app(),
                        control, self.store.save, guard, fsx=self.fsx,
                        amp=self.amp, mlflow=self.mlflow)
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no per-request lines
        self._server = make_server(self.host, self.aws_port, app, threaded=True)
        self.aws_port = guard.port = self._server.server_port
        if self.kube is not None:  # tokens presigned against this endpoint are STS's too
            self.kube.own_sts_hosts = frozenset({f"{self.host}:{self.aws_port}",
                                                 f"localhost:{self.aws_port}"})
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True,
                                        name="sandbox-aws")
        self._thread.start()
        self.store.start_autosave()
        self.write_env()
        note("sandbox_start", restored=restored)
        log.info("sandbox AWS endpoint on %s (restored=%s)", self.aws_url, restored)

    def _settle_kube(self) -> None:
        if self.kube is not None:
            self.kube.settle_from_thread()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.store.stop_autosave()
        self.store.save_all()

    def reset(self, seed: int) -> None:
        with self.world.lock:
            self.world.seed = seed
            self.world.reset()
            moto_side.reset(seed)
        if self.kube is not None:
            for name in list(self.kube.servers):
                self.kube.forget(name)
        self.store.save(moto=True)

    def attach_kube(self, loop: asyncio.AbstractEventLoop) -> KubeFleet | None:
        """Run the Kubernetes API servers on `loop`, with one for every ACTIVE EKS cluster."""
        if self.kube is None:
            return None
        self.kube.bind(loop)
        with self.world.lock:
            names = self.eks.serving_clusters()
        for name in names:
            self.kube.ensure(name)
        return self.kube

    def env_lines(self) -> list[str]:
        return [f"export AWS_ENDPOINT_URL={self.aws_url}",
                f"export AWS_ACCESS_KEY_ID={TEST_KEY}",
                f"export AWS_SECRET_ACCESS_KEY={TEST_KEY}",
                f"export AWS_DEFAULT_REGION={REGION}",
                f"export AWS_REGION={REGION}",
                f"export KUBECONFIG={self.folder / 'kubeconfig'}",
                f"export {SECRET_ENV}={self.secret}"]

    @property
    def control_headers(self) -> dict[str, str]:
        """What a client of `/_sandbox` (and `/moto-api`) must send."""
        return control_headers(self.secret)

    def write_env(self) -> Path:
        path = self.folder / "env"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_private(path, "\n".join(self.env_lines()) + "\n")  # it holds the secret: 0600
        return path

    async def serve(self, stop_event: asyncio.Event | None = None) -> None:
        """Run until SIGINT/SIGTERM (or `stop_event`): AWS endpoint, Kubernetes API, autosave."""
        stop_event = stop_event or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, stop_event.set)
            except (NotImplementedError, RuntimeError):
                pass
        self.start()
        self.attach_kube(loop)
        try:
            while not stop_event.is_set():
                try:
                    await asyncio.wait_for(stop_event.wait(), timeout=5.0)
                except TimeoutError:
                    self.store.save()  # the clock moves without mutations; keep it on disk
        finally:
            if self.kube is not None:
                await self.kube.stop()
            self.stop()
