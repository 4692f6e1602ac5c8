"""Node agents for sandbox tests, written by hand from upstream facts (not podplane's
manifests): device-plugin DaemonSets that mount kubelet's device-plugins directory, and the
HyperPod health-monitoring agent with its host paths."""

from __future__ import annotations

from typing import Any

import httpx

PLUGINS_DIR = "/var/lib/kubelet/device-plugins"
NVIDIA_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.16.1"
EFA_IMAGE = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.20"
NEURON_IMAGE = "public.ecr.aws/neuron/neuron-device-plugin:2.19.16.0"
AGENT_IMAGE = (
    "905418368575.dkr.ecr.us-west-2.amazonaws.com/hyperpod-health-monitoring-agent:"
    "1.0.1892.0_1.0.424.0"
)
DS = "/apis/apps/v1/namespaces/{ns}/daemonsets"


def daemonset(
    name: str, image: str, host_paths: list[str], ns: str = "kube-system", **pod: Any
) -> dict[str, Any]:
    vols = [{"name": f"v{i}", "hostPath": {"path": p}} for i, p in enumerate(host_paths)]
    mounts = [{"name": f"v{i}", "mountPath": p} for i, p in enumerate(host_paths)]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": name, "image": image, "volumeMounts": mounts}],
                    "volumes": vols,
                    **pod,
                },
            },
        },
    }


def install_device_plugins(client: httpx.Client) -> None:
    for body in (
        daemonset("nvidia", NVIDIA_IMAGE, [PLUGINS_DIR]),
        daemonset("efa", EFA_IMAGE, [PLUGINS_DIR, "/dev/infiniband"]),
        daemonset("neuron", NEURON_IMAGE, [PLUGINS_DIR, "/run"]),
    ):
        client.post(DS.format(ns="kube-system"), json=body).raise_for_status()


def install_health_agent(client: httpx.Client, args: list[str] | None = None) -> None:
    client.post("/api/v1/namespaces", json={"metadata": {"name": "aws-hyperpod"}})
    client.post(
        "/api/v1/namespaces/aws-hyperpod/serviceaccounts",
        json={"metadata": {"name": "health-monitoring-agent"}},
    )
    body = daemonset(
        "health-monitoring-agent",
        AGENT_IMAGE,
        ["/var/log", "/dev/kmsg", "/etc/localtime"],
        ns="aws-hyperpod",
        serviceAccountName="health-monitoring-agent",
    )
    if args:
        body["spec"]["template"]["spec"]["containers"][0]["args"] = args
    client.post(DS.format(ns="aws-hyperpod"), json=body).raise_for_status()
