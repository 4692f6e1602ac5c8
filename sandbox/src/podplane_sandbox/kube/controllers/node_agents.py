"""What runs on a node that the node's status depends on: device plugins and the health agent.

- A device plugin's resources exist only while its pod runs on the node with kubelet's
  device-plugins directory (/var/lib/kubelet/device-plugins) mounted from the host: the plugin
  registers through a socket there (Kubernetes docs "Device Plugins": "the plugin ... registers
  itself with the kubelet through a Unix socket at host path
  /var/lib/kubelet/device-plugins/kubelet.sock"). The EFA plugin also needs /dev/infiniband
  (eks-charts aws-efa-k8s-device-plugin mounts it to find the EFA devices).
- The HyperPod health-monitoring agent reads the node's logs and kernel messages (/var/log,
  /dev/kmsg host paths in the chart); without them it sees nothing. With
  `--enable-k8s-exporter=false` (the chart's Neuron variant) it writes no node conditions.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.images import normalise

Obj = dict[str, Any]
DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"
PLUGIN_IMAGES = {"nvidia/k8s-device-plugin": "nvidia", "/aws-efa-k8s-device-plugin": "efa",
                 "neuron/neuron-device-plugin": "neuron"}
EXTRA_HOST_PATHS = {"efa": ("/dev/infiniband",)}
AGENT_REPOSITORY = "/hyperpod-health-monitoring-agent"
AGENT_HOST_PATHS = ("/var/log", "/dev/kmsg")
NO_EXPORTER = "--enable-k8s-exporter=false"


def _running(pod: Obj) -> bool:
    status = pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    return (status.get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp")
            and bool(statuses) and all("running" in (c.get("state") or {}) for c in statuses))


def _mounted_host_paths(pod: Obj, container: Obj) -> set[str]:
    """Host paths the container sees at the same path (what a node agent needs)."""
    host = {v["name"]: str(v["hostPath"].get("path", "")).rstrip("/")
            for v in (pod.get("spec") or {}).get("volumes") or [] if v.get("hostPath")}
    out = set()
    for mount in container.get("volumeMounts") or []:
        path = host.get(mount.get("name", ""))
        if path and path == str(mount.get("mountPath", "")).rstrip("/"):
            out.add(path)
    return out


def _containers_on(pods: list[Obj], node: str) -> list[tuple[Obj, Obj]]:
    return [(pod, c) for pod in pods if (pod.get("spec") or {}).get("nodeName") == node
            and _running(pod) for c in (pod.get("spec") or {}).get("containers") or []]


def registered_plugins(pods: list[Obj], node: str) -> set[str]:
    """Device plugins (nvidia, efa, neuron) registered with the node's kubelet."""
    out = set()
    for pod, container in _containers_on(pods, node):
        repo = normalise(container.get("image", ""))[0]
        kind = next((k for suffix, k in PLUGIN_IMAGES.items() if repo.endswith(suffix)), None)
        paths = _mounted_host_paths(pod, container)
        needs = (DEVICE_PLUGINS, *EXTRA_HOST_PATHS.get(kind or "", ()))
        if kind and all(p in paths for p in needs):
            out.add(kind)
    return out


def health_agent(pods: list[Obj], node: str) -> str | None:
    """"conditions" when an agent on the node reports labels and conditions, "labels" when it
    reports labels only, None when no working agent runs there."""
    for pod, container in _containers_on(pods, node):
        repo = normalise(container.get("image", ""))[0]
        paths = _mounted_host_paths(pod, container)
        if repo.endswith(AGENT_REPOSITORY) and all(p in paths for p in AGENT_HOST_PATHS):
            return "labels" if NO_EXPORTER in (container.get("args") or []) else "conditions"
    return None


def agent_pods_by_node(pods: list[Obj]) -> dict[str, list[Obj]]:
    """Node-agent pods grouped by node (one pass over the pods for all nodes)."""
    out: dict[str, list[Obj]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node and is_node_agent(pod):
            out.setdefault(node, []).append(pod)
    return out


def is_node_agent(pod: Obj) -> bool:
    """Pods whose start or stop changes their node's status (so the node is looked at again)."""
    return any(str((v.get("hostPath") or {}).get("path", "")).rstrip("/")
               in (DEVICE_PLUGINS, *AGENT_HOST_PATHS)
               for v in (pod.get("spec") or {}).get("volumes") or [])
