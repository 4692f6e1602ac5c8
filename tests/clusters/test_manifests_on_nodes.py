"""podplane's rendered dependencies on the sandbox's nodes (which behave like kubelet): every
DaemonSet lands on the instance types the chart names, pulls, starts, and the node then shows
the devices. Covers the Neuron side, which the end-to-end create (a GPU type) does not."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS
from tests.sandbox_kube.conftest import FakeNodeSource, Sandbox

PLURAL = {"Namespace": "namespaces", "ServiceAccount": "serviceaccounts",
          "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
          "DaemonSet": "daemonsets", "Deployment": "deployments", "Service": "services",
          "CustomResourceDefinition": "customresourcedefinitions"}
OPERATORS = {"dependencies-training-operators", "dependencies-mpi-operator"}


def _url(obj: dict[str, Any]) -> str:
    group = obj["apiVersion"]
    base = f"/api/{group}" if "/" not in group else f"/apis/{group}"
    ns = obj["metadata"].get("namespace")
    return base + (f"/namespaces/{ns}" if ns else "") + "/" + PLURAL[obj["kind"]]


def _apply_all(client: httpx.Client) -> None:
    for unit in CORE_UNITS:
        if unit.kind != "manifest":
            continue
        for obj in manifests.for_unit(unit.name, unit.version or "", "us-west-2"):
            r = client.post(_url(obj), json=obj)
            assert r.status_code in (201, 409), r.text  # 409: a namespace two units share


@pytest.mark.parametrize(("instance_type", "running", "devices"), [
    ("ml.trn1.32xlarge",
     {"health-monitoring-agent-non-nvidia", "neuron-device-plugin-daemonset",
      "aws-efa-k8s-device-plugin-daemonset"},
     {"aws.amazon.com/neuron": "16", "aws.amazon.com/neuroncore": "32",
      "vpc.amazonaws.com/efa": "8"}),
    ("ml.p5.48xlarge",
     {"health-monitoring-agent", "nvidia-device-plugin-daemonset",
      "aws-efa-k8s-device-plugin-daemonset"},
     {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}),
    ("ml.m5.xlarge", set(), {}),
])
def test_rendered_dependencies_run_where_the_chart_puts_them(
        tmp_path: Path, instance_type: str, running: set[str], devices: dict[str, str]) -> None:
    box = Sandbox(tmp_path, FakeNodeSource(count=1, instance_type=instance_type))
    try:
        ca = ssl.create_default_context(cafile=str(box.state_dir / "kube-ca.crt"))
        headers = {"Authorization": "Bearer " + box.api.token()}
        with httpx.Client(base_url=box.api.endpoint, verify=ca, headers=headers) as client:
            _apply_all(client)
            box.advance(5)
            pods = client.get("/api/v1/pods").json()["items"]
            (node,) = client.get("/api/v1/nodes").json()["items"]
            deployments = client.get("/apis/apps/v1/deployments").json()["items"]
        owners = {p["metadata"]["ownerReferences"][0]["name"] for p in pods
                  if p["status"].get("phase") == "Running"
                  and p["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"}
        assert owners == running
        # The Kubeflow operators' Deployments have no affinity: they run on any node.
        available = {d["metadata"]["name"] for d in deployments
                     if d["status"].get("availableReplicas") == 1}
        assert available == OPERATORS
        extended = {k: v for k, v in node["status"]["allocatable"].items() if "/" in k}
        assert {k: extended[k] for k in devices} == devices
        assert ("nvidia.com/gpu" in extended) == ("nvidia.com/gpu" in devices)
    finally:
        box.stop()
