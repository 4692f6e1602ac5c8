"""One create request reaches `succeeded` with every step; the cloud shows what it promised."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from podplane.domain.clusters import CREATE_STEPS
from podplane.domain.dependencies import CORE_UNITS, plan_units
from podplane.domain.manifests.health import AGENT
from podplane.services.cloud_access import cloud_of
from podplane.services.clusters import dependencies as cluster_deps
from tests.clusters.helpers import BODY, step, wait_done
from tests.stack import Stack


def aws_cli(stack: Stack, *args: str) -> dict[str, Any]:
    """The AWS CLI (from PyPI) against the sandbox endpoint: what an operator would run."""
    env = {**os.environ, "AWS_ENDPOINT_URL": stack.aws_url, "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-west-2"}
    done = subprocess.run([str(Path(sys.executable).parent / "aws"), *args, "--output", "json"],
                          env=env, capture_output=True, text=True, timeout=60, check=True)
    return dict(json.loads(done.stdout))


async def test_create_through_rest_then_idempotent_and_unchanged(stack: Stack) -> None:
    async with stack.client("operator") as api:
        r = await api.post("/api/v1/clusters", json=BODY, headers={"Idempotency-Key": "k-1"})
        assert r.status_code == 202, r.text
        op = r.json()
        assert op["kind"] == "cluster.create" and op["target"] == "cluster/alpha"
        assert op["status_tool"] == "operation_wait"
        done = await wait_done(api, op["id"])
        assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
        assert [s["name"] for s in done["steps"]] == list(CREATE_STEPS)
        assert all(s["status"] == "succeeded" for s in done["steps"])

        again = await api.post("/api/v1/clusters", json=BODY, headers={"Idempotency-Key": "k-1"})
        assert again.json()["id"] == op["id"]
        same = await api.post("/api/v1/clusters", json=BODY)
        assert same.status_code == 200 and same.json() == {"changed": False, "plan": []}

        status = (await api.get("/api/v1/clusters/alpha")).json()
    assert status["eks"]["status"] == "ACTIVE"
    assert status["hyperpod"]["status"] == "InService"
    assert status["hyperpod"]["node_recovery"] == "Automatic"
    assert set(status["addons"].values()) == {"ACTIVE"}
    deps = status["dependencies"]
    assert deps["nvidia-device-plugin"] == {"kind": "manifest", "installed": True,
                                            "version": "0.16.1", "healthy": True}
    assert all(d["installed"] and d["healthy"] for d in deps.values())

    hp = stack.aws("sagemaker").describe_cluster(ClusterName="alpha")
    assert hp["ClusterStatus"] == "InService" and hp["NodeRecovery"] == "Automatic"
    assert hp["NodeProvisioningMode"] == "Continuous"
    group = hp["InstanceGroups"][0]
    assert group["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    assert group["CurrentCount"] == 2
    assert aws_cli(stack, "sagemaker", "describe-cluster", "--cluster-name", "alpha")[
        "NodeRecovery"] == "Automatic"
    assert aws_cli(stack, "eks", "describe-addon", "--cluster-name", "alpha", "--addon-name",
                   "amazon-sagemaker-hyperpod-training-operator")["addon"]["status"] == "ACTIVE"
    eks = stack.aws("eks")
    for name in eks.list_addons(clusterName="alpha")["addons"]:
        assert eks.describe_addon(clusterName="alpha", addonName=name)["addon"]["status"] == \
            "ACTIVE"
    assert len(stack.ledger(service="eks", action="CreateCluster")) == 1
    assert len(stack.ledger(service="sagemaker", action="CreateCluster")) == 1

    nodes = json.loads(stack.kubectl("get", "nodes", "-l",
                                     "sagemaker.amazonaws.com/cluster-name=alpha", "-o", "json"))
    assert len(nodes["items"]) == 2
    labels = nodes["items"][0]["metadata"]["labels"]
    assert labels["sagemaker.amazonaws.com/compute-type"] == "hyperpod"
    assert labels["topology.kubernetes.io/zone"] == "us-west-2a"
    for node in nodes["items"]:  # GPUs only because the rendered NVIDIA plugin registered
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "1"
        assert "/sagemaker/cluster/hyperpod-" in node["spec"]["providerID"]
    agents = json.loads(stack.kubectl("get", "pods", "-n", "aws-hyperpod", "-o", "json"))
    agents["items"] = [p for p in agents["items"] if p["metadata"]["name"].startswith(AGENT)]
    assert len([p for p in agents["items"] if p["status"].get("phase") == "Running"]) == 2
    assert {p["spec"]["containers"][0]["image"] for p in agents["items"]} == {
        "905418368575.dkr.ecr.us-west-2.amazonaws.com/hyperpod-health-monitoring-agent:"
        "1.0.1892.0_1.0.424.0"}
    assert "s3-claim" in stack.kubectl("get", "pvc", "-n", "default")
    # The chart's Kubeflow operators: installed after nodes, their CRDs served, pods Available.
    assert deps["kubeflow-training-operator"] == {"kind": "manifest", "installed": True,
                                                  "version": "v1-855e096", "healthy": True}
    assert deps["mpi-operator"] == {"kind": "manifest", "installed": True, "version": "0.5",
                                    "healthy": True}
    for crd in ("pytorchjobs.kubeflow.org", "mpijobs.kubeflow.org"):
        found = json.loads(stack.kubectl("get", "crd", crd, "-o", "json"))
        assert {c["type"]: c["status"] for c in found["status"]["conditions"]}[
            "Established"] == "True"
    for ns, name in (("kubeflow", "dependencies-training-operators"),
                     ("kube-system", "dependencies-mpi-operator")):
        dep = json.loads(stack.kubectl("get", "deployment", name, "-n", ns, "-o", "json"))
        assert {c["type"]: c["status"] for c in dep["status"]["conditions"]}[
            "Available"] == "True", dep["status"]
    # served (kubectl fails on an unknown resource type), and empty
    assert stack.kubectl("get", "pytorchjobs,mpijobs,tfjobs", "-A", "-o", "name") == ""
    assert step(done, "verify")["status"] == "succeeded"

    # Reconcile, don't replay: after the apply, the dependency plan is empty.
    cloud = cloud_of(stack.app.state.podplane)
    observed = await cluster_deps.observe(cloud, "alpha")
    assert plan_units(CORE_UNITS, observed, await cluster_deps.default_versions(cloud)) == []
    assert stack.aws("eks").list_pod_identity_associations(clusterName="alpha")[
        "associations"][0]["serviceAccount"] == "s3-csi-driver-sa"
