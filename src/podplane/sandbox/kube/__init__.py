"""The sandbox's Kubernetes API emulator, served over TLS with kwok-like controllers."""

from __future__ import annotations

from pathlib import Path

from podplane.sandbox.clock import VirtualClock
from podplane.sandbox.contracts import NodeSource
from podplane.sandbox.kube.server import KubeApiServer


def start_kube_api(
    state_dir: Path,
    clock: VirtualClock,
    node_source: NodeSource,
    host: str,
    port: int,
    *,
    eks_cluster_name: str | None = None,
) -> KubeApiServer:
    """Build the emulator; the caller awaits `.start()` and later `.stop()`.

    With `eks_cluster_name`, only that cluster's HyperPod instances become nodes and the
    kubeconfig token names it; without it, every instance the NodeSource reports does.
    """
    return KubeApiServer(state_dir, clock, node_source, host, port, eks_cluster_name)


__all__ = ["KubeApiServer", "start_kube_api"]
