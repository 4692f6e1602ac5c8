"""The sandbox's Kubernetes API emulator, served over TLS with kwok-like controllers."""

from __future__ import annotations

from pathlib import Path

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.contracts import AccessSource, NodeSource
from podplane_sandbox.kube.server import KubeApiServer


def start_kube_api(
    state_dir: Path,
    clock: VirtualClock,
    node_source: NodeSource,
    host: str,
    port: int,
    *,
    eks_cluster_name: str | None = None,
    access: AccessSource | None = None,
    own_sts_hosts: frozenset[str] = frozenset(),
) -> KubeApiServer:
    """Build one API server; the caller awaits `.start()` and later `.stop()`.

    With `eks_cluster_name`, only that cluster's HyperPod instances become nodes and tokens
    must be made for that cluster; `access` decides who may do what (EKS access entries);
    without it only the sandbox's default identity is let in, as a cluster admin.
    """
    return KubeApiServer(state_dir, clock, node_source, host, port, eks_cluster_name,
                         access, own_sts_hosts)


__all__ = ["KubeApiServer", "start_kube_api"]
