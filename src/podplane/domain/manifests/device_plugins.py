"""Device plugins: they register GPUs, EFA interfaces and Neuron devices with the kubelet.

A plugin registers over a socket in /var/lib/kubelet/device-plugins; only then does the node
advertise `nvidia.com/gpu`, `vpc.amazonaws.com/efa` or `aws.amazon.com/neuron*` (Kubernetes docs,
"Device Plugins"). Versions and facts follow the HyperPod dependencies chart (aws/sagemaker-
hyperpod-cli @ 011ca927, chart 0.1.0): NVIDIA chart 0.16.1 in kube-system with instance-type
affinity; eks-charts aws-efa-k8s-device-plugin 0.5.20 (regional EKS image, hostNetwork, the
device-plugins, /dev/infiniband and /opt/aws/neuron host paths); the chart's own
neuron-device-plugin (public.ecr.aws/neuron image 2.19.16.0, device-plugins and /run).
"""

from __future__ import annotations

from typing import Any

from podplane.domain.manifests.accelerators import (
    EFA_TYPES,
    NEURON_PLUGIN_TYPES,
    NVIDIA_TYPES,
    on_instance_types,
)
from podplane.domain.manifests.common import (
    DEVICE_PLUGINS_DIR,
    UNHEALTHY_TOLERATION,
    Manifest,
    cluster_role,
    cluster_role_binding,
    daemonset,
    env_from_field,
    host_paths,
    rule,
    sa_subject,
    service_account,
)
from podplane.domain.manifests.registries import eks_registry

NS = "kube-system"
CRITICAL_ADDONS = {"key": "CriticalAddonsOnly", "operator": "Exists"}
NO_PRIVILEGES = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def _taint_of(resource: str) -> dict[str, str]:
    return {"key": resource, "operator": "Exists", "effect": "NoSchedule"}


def nvidia_image(version: str) -> str:
    return f"nvcr.io/nvidia/k8s-device-plugin:v{version}"


def efa_image(version: str, region: str) -> str:
    return f"{eks_registry(region)}/eks/aws-efa-k8s-device-plugin:v{version}"


def neuron_image(version: str) -> str:
    return f"public.ecr.aws/neuron/neuron-device-plugin:{version}"


def _plugin_pod(types: tuple[str, ...], container: dict[str, Any],
                paths: dict[str, tuple[str, str, bool]], tolerations: list[dict[str, str]],
                **extra: Any) -> dict[str, Any]:
    volumes, mounts = host_paths(paths)
    return {"affinity": on_instance_types(types), "priorityClassName": "system-node-critical",
            "tolerations": tolerations, "containers": [{**container, "volumeMounts": mounts}],
            "volumes": volumes, **extra}


def nvidia_device_plugin(version: str, region: str) -> list[Manifest]:
    unit = "nvidia-device-plugin"
    container = {"name": "nvidia-device-plugin-ctr", "image": nvidia_image(version),
                 "args": ["--fail-on-init-error=false"],
                 "env": [{"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"},
                         {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                         {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}],
                 "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}
    paths = {"device-plugin": (DEVICE_PLUGINS_DIR, DEVICE_PLUGINS_DIR, False),
             "cdi-root": ("/var/run/cdi", "/var/run/cdi", False)}
    tolerations = [CRITICAL_ADDONS, _taint_of("nvidia.com/gpu"), UNHEALTHY_TOLERATION]
    pod = _plugin_pod(NVIDIA_TYPES, container, paths, tolerations)
    return [daemonset("nvidia-device-plugin-daemonset", NS, unit, version, pod=pod,
                      labels={"app.kubernetes.io/instance": "nvidia-device-plugin"})]


def efa_device_plugin(version: str, region: str) -> list[Manifest]:
    unit = "aws-efa-k8s-device-plugin"
    container = {"name": "aws-efa-k8s-device-plugin", "image": efa_image(version, region),
                 "securityContext": {**NO_PRIVILEGES, "runAsNonRoot": False},
                 "resources": {"requests": {"cpu": "10m", "memory": "20Mi"}}}
    paths = {"device-plugin": (DEVICE_PLUGINS_DIR, DEVICE_PLUGINS_DIR, False),
             "infiniband-volume": ("/dev/infiniband/", "/dev/infiniband/", False),
             "neuron-tools": ("/opt/aws/neuron/", "/opt/aws/neuron/", False)}
    tolerations = [CRITICAL_ADDONS, _taint_of("aws.amazon.com/efa"), UNHEALTHY_TOLERATION]
    pod = _plugin_pod(EFA_TYPES, container, paths, tolerations, hostNetwork=True,
                      automountServiceAccountToken=False)
    pod["volumes"][2]["hostPath"]["type"] = "DirectoryOrCreate"
    return [daemonset("aws-efa-k8s-device-plugin-daemonset", NS, unit, version, pod=pod,
                      labels={"name": "aws-efa-k8s-device-plugin"})]


def neuron_device_plugin(version: str, region: str) -> list[Manifest]:
    unit = name = "neuron-device-plugin"
    rules = [rule([""], ["nodes"], ["get", "list", "watch"]),
             rule([""], ["events"], ["create", "patch"]),
             rule([""], ["pods"], ["update", "patch", "get", "list", "watch"]),
             rule([""], ["nodes/status"], ["patch", "update"])]
    container = {"name": name, "image": neuron_image(version), "imagePullPolicy": "Always",
                 "env": [{"name": "KUBECONFIG", "value": "/etc/kubernetes/kubelet.conf"},
                         env_from_field("NODE_NAME", "spec.nodeName")],
                 "securityContext": NO_PRIVILEGES}
    paths = {"device-plugin": (DEVICE_PLUGINS_DIR, DEVICE_PLUGINS_DIR, False),
             "infa-map": ("/run", "/run", False)}
    tolerations = [CRITICAL_ADDONS, _taint_of("aws.amazon.com/neuron"), UNHEALTHY_TOLERATION]
    pod = _plugin_pod(NEURON_PLUGIN_TYPES, container, paths, tolerations,
                      serviceAccountName=name)
    return [
        cluster_role(name, unit, version, rules),
        service_account(name, NS, unit, version),
        cluster_role_binding(name, unit, version, name, [sa_subject(name, NS)]),
        daemonset("neuron-device-plugin-daemonset", NS, unit, version, pod=pod,
                  labels={"name": "neuron-device-plugin-ds"}),
    ]
