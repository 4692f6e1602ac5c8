"""KubeRay in the sandbox (controllers/kuberay.py, kuberay_cluster.py): the upstream CRDs
(../shared/crds/kuberay) and the operator's Deployment installed, a RayJob becomes what
ray-project/kuberay makes of it - a RayCluster named `<job>-xxxxx`, a head and workers labelled
`ray.io/cluster`, `ray.io/node-type`, `ray.io/group`, a submitter Job named like the RayJob -
and its status moves as rayjob_controller.go moves it. Each test reads back what the
Kubernetes API holds."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from podplane.domain.manifests.feature_operators import kuberay
from tests.sandbox_kube.conftest import FakeNodeSource, Sandbox
from tests.sandbox_kube.test_kubelet_rules import _client

CRDS = Path(__file__).resolve().parents[3] / "shared" / "crds" / "kuberay"
NS = "/api/v1/namespaces/default"
RAYJOBS = "/apis/ray.io/v1/namespaces/default/rayjobs"
CLUSTERS = "/apis/ray.io/v1/namespaces/default/rayclusters"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
IMAGE = "rayproject/ray-llm:2.56.0-py312-cu130"
PATHS = {"Namespace": "/api/v1/namespaces",
         "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
         "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
         "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
         "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments"}


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    sandbox = Sandbox(tmp_path_factory.mktemp("kuberay"),
                      FakeNodeSource(count=3, instance_type="ml.g5.12xlarge"))
    yield sandbox
    sandbox.stop()


@pytest.fixture(scope="module")
def client(box: Sandbox) -> Iterator[httpx.Client]:
    with _client(box) as c:
        yield c


def install(client: httpx.Client) -> None:
    """The upstream RayCluster and RayJob CRDs, then the operator as the feature renders it."""
    for name in ("ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml"):
        crd = yaml.load((CRDS / name).read_text(), getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    json=crd).raise_for_status()
    for obj in kuberay("kuberay", "v1.7.0"):
        if obj["kind"] in PATHS:
            path = PATHS[obj["kind"]].format(ns=obj["metadata"].get("namespace", ""))
            client.post(path, json=obj).raise_for_status()


def rayjob(name: str, workers: int = 2, **annotations: str) -> dict[str, Any]:
    def template(cpus: int) -> dict[str, Any]:  # no GPU: these nodes run no device plugin
        return {"metadata": {"labels": {"team": "rl"}}, "spec": {"containers": [{
            "name": "ray", "image": IMAGE,
            "resources": {"limits": {"cpu": str(cpus), "memory": "8Gi"}}}]}}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"entrypoint": "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo",
                     "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": 30,
                     "rayClusterSpec": {
                         "rayVersion": "2.56.0",
                         "headGroupSpec": {"rayStartParams": {}, "template": template(2)},
                         "workerGroupSpecs": [{"groupName": "gpu", "replicas": workers,
                                               "minReplicas": 0, "maxReplicas": workers,
                                               "rayStartParams": {},
                                               "template": template(4)}]}}}


def status(client: httpx.Client, name: str) -> dict[str, Any]:
    return dict(client.get(f"{RAYJOBS}/{name}").json().get("status") or {})


def pods(client: httpx.Client, selector: str) -> dict[str, dict[str, Any]]:
    found = client.get(f"{NS}/pods", params={"labelSelector": selector}).json()["items"]
    return {p["metadata"]["name"]: p for p in found}


def test_nothing_happens_until_the_operator_runs(box: Sandbox, client: httpx.Client) -> None:
    install(client)
    box.advance(1)
    # CRDs are there but the operator's pod has not started yet: the RayJob just sits
    client.post(RAYJOBS, json=rayjob("early", workers=1)).raise_for_status()
    assert "status" not in client.get(f"{RAYJOBS}/early").json()
    box.advance(30)
    assert status(client, "early")["jobDeploymentStatus"] in ("Initializing", "Running")
    client.delete(f"{RAYJOBS}/early").raise_for_status()
    box.advance(5)
    assert client.get(f"{RAYJOBS}/early").status_code == 404
    assert client.get(CLUSTERS).json()["items"] == []
    assert pods(client, "ray.io/is-ray-node=yes") == {}


def test_a_rayjob_makes_a_cluster_runs_to_succeeded_and_the_cluster_goes_after_ttl(
        box: Sandbox, client: httpx.Client) -> None:
    client.post(RAYJOBS, json=rayjob("grpo", workers=2, **{
        "sandbox.podplane.io/duration-seconds": "40"})).raise_for_status()
    box.advance(1)
    first = status(client, "grpo")
    assert first["jobDeploymentStatus"] == "Initializing" and first["jobStatus"] == ""
    cluster_name = first["rayClusterName"]
    assert re.fullmatch(r"grpo-[a-z0-9]{5}", cluster_name), cluster_name
    assert first["jobId"].startswith("grpo-") and first["startTime"]
    got = client.get(f"{RAYJOBS}/grpo").json()
    assert got["metadata"]["finalizers"] == ["ray.io/rayjob-finalizer"]

    cluster = client.get(f"{CLUSTERS}/{cluster_name}").json()
    assert cluster["metadata"]["labels"]["ray.io/originated-from-cr-name"] == "grpo"
    assert cluster["metadata"]["labels"]["ray.io/originated-from-crd"] == "RayJob"
    assert cluster["metadata"]["ownerReferences"][0]["kind"] == "RayJob"
    ray_pods = pods(client, f"ray.io/cluster={cluster_name}")
    heads = [p for p in ray_pods.values() if p["metadata"]["labels"]["ray.io/node-type"] == "head"]
    workers = [p for p in ray_pods.values()
               if p["metadata"]["labels"]["ray.io/node-type"] == "worker"]
    assert len(heads) == 1 and len(workers) == 2
    assert re.fullmatch(rf"{cluster_name}-head-[a-z0-9]{{5}}", heads[0]["metadata"]["name"])
    assert all(re.fullmatch(rf"{cluster_name}-gpu-worker-[a-z0-9]{{5}}", w["metadata"]["name"])
               for w in workers)
    assert heads[0]["metadata"]["labels"]["ray.io/group"] == "headgroup"
    assert {w["metadata"]["labels"]["ray.io/group"] for w in workers} == {"gpu"}
    assert heads[0]["metadata"]["labels"]["team"] == "rl"  # the template's labels are kept
    assert "ray start --head" in heads[0]["spec"]["containers"][0]["args"][0]
    assert f"--address={cluster_name}-head-svc" in workers[0]["spec"]["containers"][0]["args"][0]
    assert client.get(f"{NS}/services/{cluster_name}-head-svc").status_code == 200

    seen = set()
    for _ in range(10):  # head and workers run: the cluster is ready, the submitter is created
        box.advance(1)
        seen.add(status(client, "grpo").get("jobStatus"))
    cluster = client.get(f"{CLUSTERS}/{cluster_name}").json()
    assert cluster["status"]["state"] == "ready"
    assert cluster["status"]["desiredWorkerReplicas"] == 2
    assert (cluster["status"]["desiredCPU"], cluster["status"]["desiredGPU"]) == ("10", "0")
    now = status(client, "grpo")
    assert now["jobDeploymentStatus"] == "Running"
    assert now["dashboardURL"] == f"{cluster_name}-head-svc.default.svc.cluster.local:8265"
    submitter = client.get(f"{JOBS}/grpo").json()
    assert submitter["spec"]["backoffLimit"] == 2
    assert submitter["metadata"]["ownerReferences"][0]["name"] == "grpo"
    container = submitter["spec"]["template"]["spec"]["containers"][0]
    assert container["name"] == "ray-job-submitter" and container["image"] == IMAGE
    assert "ray job submit" in container["args"][0] and "verl.trainer.main_ppo" in \
        container["args"][0]
    for _ in range(60):
        box.advance(1)
        seen.add(status(client, "grpo").get("jobStatus"))
        if status(client, "grpo")["jobDeploymentStatus"] == "Complete":
            break
    assert {"PENDING", "RUNNING", "SUCCEEDED"} <= seen, seen
    done = status(client, "grpo")
    assert (done["jobDeploymentStatus"], done["jobStatus"]) == ("Complete", "SUCCEEDED")
    assert done["message"] == "Job finished successfully." and done["endTime"]
    assert done["rayJobInfo"]["startTime"] and done["rayJobInfo"]["endTime"]
    driver = next(iter(pods(client, "batch.kubernetes.io/job-name=grpo")))
    logs = client.get(f"{NS}/pods/{driver}/log").text
    assert f"Job '{done['jobId']}' submitted successfully" in logs
    assert re.search(r"step:3 - actor/pg_loss:\S+ - actor/entropy:", logs), logs
    assert f"Job '{done['jobId']}' succeeded" in logs

    box.advance(25)  # before the TTL the cluster stays
    assert client.get(f"{CLUSTERS}/{cluster_name}").status_code == 200
    box.advance(10)
    assert client.get(f"{CLUSTERS}/{cluster_name}").status_code == 404
    box.advance(2)
    assert pods(client, f"ray.io/cluster={cluster_name}") == {}
    assert client.get(f"{JOBS}/grpo").status_code == 200  # driver logs stay
    assert driver in pods(client, "batch.kubernetes.io/job-name=grpo")


def test_a_failing_entrypoint_fails_the_rayjob_with_rays_message(
        box: Sandbox, client: httpx.Client) -> None:
    client.post(RAYJOBS, json=rayjob("broken", workers=1, **{
        "sandbox.podplane.io/duration-seconds": "10",
        "sandbox.podplane.io/exit-code": "1"})).raise_for_status()
    box.advance(40)
    done = status(client, "broken")
    assert (done["jobDeploymentStatus"], done["jobStatus"], done["reason"]) == (
        "Failed", "FAILED", "AppFailed")
    assert done["message"].startswith("Job entrypoint command failed with exit code 1")
    assert (done["failed"], done["succeeded"]) == (1, 0)
    driver = next(iter(pods(client, "batch.kubernetes.io/job-name=broken")))
    assert f"Job '{done['jobId']}' failed" in client.get(f"{NS}/pods/{driver}/log").text

    retried = rayjob("retried", workers=1, **{"sandbox.podplane.io/duration-seconds": "10",
                                              "sandbox.podplane.io/exit-code": "1"})
    retried["spec"]["backoffLimit"] = 1
    client.post(RAYJOBS, json=retried).raise_for_status()
    box.advance(2)
    first_cluster = status(client, "retried")["rayClusterName"]
    box.advance(90)  # fails, is retried (Retrying -> New) on a new cluster, fails again
    done = status(client, "retried")
    assert done["jobDeploymentStatus"] == "Failed", done
    assert (done["failed"], done["reason"]) == (2, "AppFailed")
    assert done["rayClusterName"] != first_cluster  # the retry ran on a new cluster
    assert client.get(f"{CLUSTERS}/{first_cluster}").status_code == 404


def test_suspend_releases_the_cluster_and_a_bad_spec_is_refused(
        box: Sandbox, client: httpx.Client) -> None:
    client.post(RAYJOBS, json=rayjob("paused", workers=1, **{
        "sandbox.podplane.io/duration-seconds": "600"})).raise_for_status()
    box.advance(20)
    cluster_name = status(client, "paused")["rayClusterName"]
    assert status(client, "paused")["jobStatus"] == "RUNNING"
    client.patch(f"{RAYJOBS}/paused", json={"spec": {"suspend": True}},
                 headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
    box.advance(6)
    now = status(client, "paused")
    assert (now["jobDeploymentStatus"], now["jobStatus"]) == ("Suspended", "")
    assert "rayClusterName" not in now
    assert client.get(f"{CLUSTERS}/{cluster_name}").status_code == 404
    assert client.get(f"{JOBS}/paused").status_code == 404
    box.advance(2)
    assert pods(client, f"ray.io/cluster={cluster_name}") == {}

    bad = rayjob("nosd", workers=1)
    bad["spec"].update(suspend=True, shutdownAfterJobFinishes=False)
    client.post(RAYJOBS, json=bad).raise_for_status()
    box.advance(2)
    refused = status(client, "nosd")
    assert refused["jobDeploymentStatus"] == "ValidationFailed"
    assert "shutdownAfterJobFinishes set to false is not allowed to be suspended" in \
        refused["message"]
    assert client.get(CLUSTERS, params={
        "labelSelector": "ray.io/originated-from-cr-name=nosd"}).json()["items"] == []
