"""The sandbox's Kubernetes API emulator, served over TLS with kwok-like controllers."""

from __future__ import annotations

from pathlib import Path

from podplane.sandbox.clock import VirtualClock
from podplane.sandbox.contracts import NodeSource
from podplane.sandbox.kube.server import KubeApiServer


def start_kube_api(
    state_dir: Path, clock: VirtualClock, node_source: NodeSource, host: str, port: int
) -> KubeApiServer:
    """Build the emulator; the caller awaits `.start()` and later `.stop()`."""
    return KubeApiServer(state_dir, clock, node_source, host, port)


__all__ = ["KubeApiServer", "start_kube_api"]
