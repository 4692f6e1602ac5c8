"""HyperPod health: the health-monitoring agent and the deep-health-check RBAC.

Written from the facts of the HyperPod dependencies chart, aws/sagemaker-hyperpod-cli @ 011ca927,
`helm_chart/HyperPodHelmChart` (chart 0.1.0): `charts/health-monitoring-agent` (image
`hyperpod-health-monitoring-agent:1.0.1892.0_1.0.424.0` in a regional private ECR repository;
host paths /var/log, /dev/kmsg, /etc/localtime; NODE_NAME/NODE_IP; RBAC with nodes/status
patch; one DaemonSet for NVIDIA types and one for Neuron types with the Kubernetes exporter
off) and `charts/deep-health-check` (ServiceAccount, ClusterRole, ClusterRoleBinding that
HyperPod's deep-health-check pods run under).
"""

from __future__ import annotations

from typing import Any

from podplane.domain.manifests.accelerators import (
    NEURON_AGENT_TYPES,
    NVIDIA_TYPES,
    on_instance_types,
)
from podplane.domain.manifests.common import (
    Manifest,
    cluster_role,
    cluster_role_binding,
    daemonset,
    env_from_field,
    host_paths,
    namespace,
    rule,
    sa_subject,
    service_account,
)
from podplane.domain.manifests.registries import hma_registry

NAMESPACE = "aws-hyperpod"
AGENT = "health-monitoring-agent"
NEURON_AGENT = "health-monitoring-agent-non-nvidia"
AGENT_DAEMONSETS = (AGENT, NEURON_AGENT)
AGENT_VERSION = "1.0.1892.0_1.0.424.0"
DHC_ACCOUNT = "deep-health-check-service-account"
TOLERATE_ANY_TAINT = [{"effect": "NoSchedule", "operator": "Exists"},
                      {"effect": "NoExecute", "operator": "Exists"}]
AGENT_HOST_PATHS = {"log": ("/var/log/", "/var/log", False),
                    "kmsg": ("/dev/kmsg", "/dev/kmsg", True),
                    "localtime": ("/etc/localtime", "/etc/localtime", True)}


def agent_image(region: str, version: str = AGENT_VERSION) -> str:
    return f"{hma_registry(region)}/hyperpod-health-monitoring-agent:{version}"


def health_monitoring_agent(version: str, region: str) -> list[Manifest]:
    unit = "hyperpod-health-monitoring-agent"
    rules = [rule([""], ["nodes"], ["get"]),
             rule([""], ["nodes", "nodes/status"], ["patch"]),
             rule(["", "events.k8s.io"], ["events"], ["create", "patch", "update"])]
    return [
        namespace(NAMESPACE, unit, version),
        cluster_role(AGENT, unit, version, rules),
        service_account(AGENT, NAMESPACE, unit, version),
        cluster_role_binding(AGENT, unit, version, AGENT, [sa_subject(AGENT, NAMESPACE)]),
        _agent(AGENT, unit, version, region, NVIDIA_TYPES, args=[], env=[]),
        _agent(NEURON_AGENT, unit, version, region, NEURON_AGENT_TYPES,
               args=["--enable-k8s-exporter=false",
                     "--config.system-log-monitor=/config/system-message-monitor.json"],
               env=[{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
                    {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": ""}]),
    ]


def _agent(name: str, unit: str, version: str, region: str, types: tuple[str, ...], *,
           args: list[str], env: list[dict[str, Any]]) -> Manifest:
    volumes, mounts = host_paths(AGENT_HOST_PATHS)
    container: dict[str, Any] = {
        "name": name, "image": agent_image(region, version), "imagePullPolicy": "IfNotPresent",
        "resources": {"requests": {"cpu": "500m", "memory": "512Mi"},
                      "limits": {"cpu": "500m", "memory": "512Mi"}},
        "securityContext": {"runAsUser": 1000, "runAsGroup": 2000},
        "env": [env_from_field("NODE_NAME", "spec.nodeName"),
                env_from_field("NODE_IP", "status.hostIP"), *env],
        "volumeMounts": mounts}
    if args:
        container["args"] = args
    pod = {"affinity": on_instance_types(types), "containers": [container],
           "serviceAccountName": AGENT, "volumes": volumes, "tolerations": TOLERATE_ANY_TAINT}
    return daemonset(name, NAMESPACE, unit, version, labels={"app": name}, pod=pod)


def deep_health_check(version: str, region: str) -> list[Manifest]:
    """The identity HyperPod's on-start deep-health-check pods run as (read nodes, patch pods)."""
    unit = "hyperpod-deep-health-check"
    role = f"{DHC_ACCOUNT}-role"
    return [
        namespace(NAMESPACE, unit, version),
        service_account(DHC_ACCOUNT, NAMESPACE, unit, version),
        cluster_role(role, unit, version, [rule([""], ["nodes"], ["get", "list"]),
                                           rule([""], ["pods"], ["get", "list", "patch"])]),
        cluster_role_binding(f"{role}-binding", unit, version, role,
                             [sa_subject(DHC_ACCOUNT, NAMESPACE)]),
    ]
