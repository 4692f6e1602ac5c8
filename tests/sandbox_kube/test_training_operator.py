"""The HyperPod training operator's behaviour (docs/sandbox.md, "HyperPod training operator"):
each test asserts what Kubernetes shows - pods, their names, labels, phases and logs, the job's
status conditions - never podplane's reaction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from podplane_sandbox.kube.addon_manifests import objects_for
from tests.sandbox_kube.conftest import FakeNodeSource, Sandbox
from tests.sandbox_kube.test_kubelet_rules import _client, events

ADDON = "amazon-sagemaker-hyperpod-training-operator"
JOBS = "/apis/sagemaker.amazonaws.com/v1/namespaces/default/hyperpodpytorchjobs"
PODS = "/api/v1/namespaces/default/pods"
PATHS = {"Namespace": "/api/v1/namespaces",
         "CustomResourceDefinition": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
         "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
         "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments"}


@pytest.fixture()
def box(tmp_path: Path) -> Iterator[Sandbox]:
    sandbox = Sandbox(tmp_path, FakeNodeSource(count=2, instance_type="ml.m5.xlarge"))
    yield sandbox
    sandbox.stop()


@pytest.fixture()
def client(box: Sandbox) -> Iterator[httpx.Client]:
    with _client(box) as c:
        yield c


def install(client: httpx.Client, with_controller: bool = True) -> None:
    """What the add-on applies: its namespace and CRD, and (optionally) its controller."""
    for obj in objects_for(ADDON, "v1.0.0-eksbuild.1"):
        if obj["kind"] == "Deployment" and not with_controller:
            continue
        path = PATHS[obj["kind"]].format(ns=obj["metadata"].get("namespace", ""))
        client.post(path, json=obj).raise_for_status()


def job(name: str, replicas: int, nproc: str = "2", **annotations: str) -> dict[str, Any]:
    container = {"name": "trainer", "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"}
    template = {"metadata": {"labels": {"team": "a"}, "annotations": annotations},
                "spec": {"containers": [container]}}
    return {"apiVersion": "sagemaker.amazonaws.com/v1", "kind": "HyperPodPyTorchJob",
            "metadata": {"name": name},
            "spec": {"nprocPerNode": nproc,
                     "replicaSpecs": [{"name": "worker", "replicas": replicas,
                                       "template": template}]}}


def conditions(client: httpx.Client, name: str) -> dict[str, str]:
    status = client.get(f"{JOBS}/{name}").json().get("status") or {}
    return {c["type"]: c["status"] for c in status.get("conditions") or []}


def pods_of(client: httpx.Client, name: str) -> dict[str, dict[str, Any]]:
    found = client.get(PODS, params={"labelSelector": f"HPJob={name}"}).json()["items"]
    return {p["metadata"]["name"]: p for p in found}


def test_nothing_runs_a_job_until_the_operator_controller_does(box: Sandbox,
                                                              client: httpx.Client) -> None:
    install(client, with_controller=False)
    client.post(JOBS, json=job("early", 2)).raise_for_status()
    box.advance(30)
    assert pods_of(client, "early") == {}
    assert "status" not in client.get(f"{JOBS}/early").json()
    for obj in objects_for(ADDON, "v1.0.0-eksbuild.1"):
        if obj["kind"] == "Deployment":
            client.post(PATHS["Deployment"].format(ns="aws-hyperpod"), json=obj)
    box.advance(10)
    pods = pods_of(client, "early")
    assert sorted(pods) == ["early-worker-0", "early-worker-1"]
    assert all(p["metadata"]["labels"] == {"team": "a", "HPJob": "early"} for p in pods.values())
    owner = pods["early-worker-0"]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == (
        "HyperPodPyTorchJob", "early", True)
    # the controller's pod carries the label the official CLI finds it by
    # (sagemaker-hyperpod-cli TRAINING_OPERATOR_LABEL, `hyp get-operator-logs`)
    found = client.get("/api/v1/namespaces/aws-hyperpod/pods",
                       params={"labelSelector": "hp-training-control-plane"}).json()["items"]
    assert len(found) == 1, found
    # a template whose subPath the API server refuses (validateLocalDescendingPath): no pod,
    # the job's FailedCreate event carries the 422, as kube-controller-manager reports it
    bad = job("escape", 1)
    bad["spec"]["replicaSpecs"][0]["template"]["spec"].update(
        volumes=[{"name": "data", "emptyDir": {}}])
    bad["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/data", "subPath": "../etc"}]
    client.post(JOBS, json=bad).raise_for_status()
    box.advance(10)
    assert pods_of(client, "escape") == {}
    assert any(r == "FailedCreate" and "must not contain '..'" in m
               for r, m in events(client, "escape")), events(client, "escape")


def test_conditions_follow_the_pods_and_logs_count_the_workers(box: Sandbox,
                                                               client: httpx.Client) -> None:
    install(client)
    box.advance(10)
    client.post(JOBS, json=job("train", 2, nproc="4")).raise_for_status()
    box.advance(1)
    assert conditions(client, "train") == {"Created": "True"}
    box.advance(10)
    assert {p["status"]["phase"] for p in pods_of(client, "train").values()} == {"Running"}
    assert conditions(client, "train") == {"Created": "True", "Running": "True"}
    logs = client.get(f"{PODS}/train-worker-1/log").text
    assert "[rank 4] initializing process group (backend=nccl, world_size=8)" in logs, logs
    box.advance(40)  # the workers exit 0
    assert conditions(client, "train") == {"Created": "True", "Running": "False",
                                           "Completed": "True"}
    status = client.get(f"{JOBS}/train").json()["status"]
    assert set(status) == {"conditions", "startTime", "completionTime"}
    client.delete(f"{JOBS}/train").raise_for_status()
    box.advance(2)
    assert pods_of(client, "train") == {}


@pytest.mark.parametrize(("nproc", "error"), [
    ("gpu", "ValueError: Cuda is not available."),
    ("many", "ValueError: Unsupported nproc_per_node value: many")])
def test_a_launcher_error_fails_the_pod_and_the_job(box: Sandbox, client: httpx.Client,
                                                    nproc: str, error: str) -> None:
    install(client)
    box.advance(10)
    client.post(JOBS, json=job("bad", 1, nproc=nproc)).raise_for_status()
    box.advance(10)
    pod = pods_of(client, "bad")["bad-worker-0"]
    assert pod["status"]["phase"] == "Failed"
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
    assert error in client.get(f"{PODS}/bad-worker-0/log").text
    found = conditions(client, "bad")
    assert found["Failed"] == "True" and found.get("Running", "False") == "False", found
    assert "Completed" not in found


def test_pods_stay_pending_when_no_node_has_the_gpus(box: Sandbox, client: httpx.Client) -> None:
    install(client)
    box.advance(10)
    gpu_job = job("gpus", 1, nproc="gpu")
    gpu_job["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": 8}}
    client.post(JOBS, json=gpu_job).raise_for_status()
    box.advance(60)
    pod = pods_of(client, "gpus")["gpus-worker-0"]
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "8"}
    scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert "Insufficient nvidia.com/gpu" in scheduled["message"]
    assert conditions(client, "gpus") == {"Created": "True"}


# -- log monitoring (controllers/log_monitoring.py) -------------------------------------------

HANG = "sandbox.podplane.io/hang-after-seconds"
LONG = {"sandbox.podplane.io/duration-seconds": "600"}
PROGRESS = r".*step \d+ .*loss.*"


def monitored(name: str, rules: list[dict[str, Any]], retries: int = 1,
              **annotations: str) -> dict[str, Any]:
    made = job(name, 1, **{**LONG, **annotations})
    made["spec"]["runPolicy"] = {"jobMaxRetryCount": retries,
                                 "logMonitoringConfiguration": rules}
    return made


def events_of(client: httpx.Client, name: str) -> list[str]:
    found = client.get("/api/v1/namespaces/default/events",
                       params={"fieldSelector": f"involvedObject.name={name}"}).json()["items"]
    return [f"{e['reason']}: {e['message']}" for e in found]


def test_a_job_whose_logs_stop_is_restarted_then_failed_by_its_hanging_rule(
        box: Sandbox, client: httpx.Client) -> None:
    install(client)
    box.advance(10)
    rules = [{"name": "JobStart", "logPattern": PROGRESS, "expectedStartCutOffInSeconds": 60},
             {"name": "JobHangingDetection", "logPattern": PROGRESS,
              "expectedRecurringFrequencyInSeconds": 60}]
    client.post(JOBS, json=monitored("hung", rules, **{HANG: "20"})).raise_for_status()
    box.advance(60)  # running, steps printed until 20 s, silent since
    assert conditions(client, "hung")["Running"] == "True"
    assert "status" not in client.get(f"{JOBS}/hung").json() or \
        "restartCount" not in client.get(f"{JOBS}/hung").json()["status"]
    box.advance(40)  # more than 60 s without a step line
    status = client.get(f"{JOBS}/hung").json()["status"]
    assert status["restartCount"] == 1
    assert status["latestFaultyPodInstanceList"]["faultyPodList"] == ["hung-worker-0"]
    restarted = [e for e in events_of(client, "hung") if e.startswith("JobRestarting")]
    assert "log monitoring rule JobHangingDetection on pod hung-worker-0: HANGING" \
        in restarted[0], restarted
    box.advance(120)  # the new pod hangs the same way: the budget (1) is spent
    found = client.get(f"{JOBS}/hung").json()["status"]["conditions"]
    failed = next(c for c in found if c["type"] == "Failed")
    assert failed["status"] == "True" and failed["reason"] == "MaxRetryCountExceeded"
    assert "JobHangingDetection" in failed["message"]


def test_a_healthy_job_runs_past_its_rules_and_a_stop_pattern_turns_a_rule_off(
        box: Sandbox, client: httpx.Client) -> None:
    install(client)
    box.advance(10)
    rules = [{"name": "JobHangingDetection", "logPattern": PROGRESS,
              "expectedRecurringFrequencyInSeconds": 30},
             {"name": "NeverSeen", "logPattern": "Experiment configuration",
              "expectedStartCutOffInSeconds": 30, "stopPattern": "initializing process group"}]
    client.post(JOBS, json=monitored("fine", rules)).raise_for_status()
    box.advance(700, step=5)  # 600 s of steps every 5 s, then exit 0
    status = client.get(f"{JOBS}/fine").json()["status"]
    assert "restartCount" not in status
    assert conditions(client, "fine")["Completed"] == "True"


@pytest.mark.parametrize(("rule", "why"), [
    ({"name": "JobStart", "logPattern": "Experiment configuration",
      "expectedStartCutOffInSeconds": 30}, "HANGING: no log line matched within 30 s"),
    ({"name": "LossTooHigh", "logPattern": r"loss (\d+\.\d+)", "metricThreshold": 0,
      "operator": "gt", "metricEvaluationDataPoints": 3}, "SLOW: metric"),
])
def test_a_start_cut_off_or_a_metric_threshold_restarts_the_job(
        box: Sandbox, client: httpx.Client, rule: dict[str, Any], why: str) -> None:
    install(client)
    box.advance(10)
    client.post(JOBS, json=monitored("ruled", [rule], retries=3)).raise_for_status()
    box.advance(60)
    status = client.get(f"{JOBS}/ruled").json()["status"]
    assert status["restartCount"] >= 1
    restarted = [e for e in events_of(client, "ruled") if e.startswith("JobRestarting")]
    assert f"log monitoring rule {rule['name']} on pod ruled-worker-0: {why}" in restarted[0]
