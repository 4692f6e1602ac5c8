"""GPU and EFA device plugins: they advertise nvidia.com/gpu and vpc.amazonaws.com/efa."""

from __future__ import annotations

from podplane.domain.manifests.common import HYPERPOD_NODES, Manifest, daemonset

SMALL = {"requests": {"cpu": "10m", "memory": "20Mi"}, "limits": {"memory": "200Mi"}}


def nvidia_device_plugin(version: str) -> list[Manifest]:
    unit = "nvidia-device-plugin"
    return [daemonset(
        "nvidia-device-plugin-daemonset", "kube-system", unit, version,
        image=f"nvcr.io/nvidia/k8s-device-plugin:v{version}",
        node_selector={"nvidia.com/gpu.present": "true"}, resources=SMALL,
        args=["--fail-on-init-error=false"])]


def efa_device_plugin(version: str) -> list[Manifest]:
    unit = "aws-efa-k8s-device-plugin"
    return [daemonset(
        "aws-efa-k8s-device-plugin-daemonset", "kube-system", unit, version,
        image=f"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:"
              f"v{version}",
        node_selector=HYPERPOD_NODES, resources=SMALL, privileged=True)]
