"""The `hyp-pytorch-job` commands of the official HyperPod CLI on a podplane-created cluster:
create (which checks that the training operator add-on installed its CRD and controller, as on
AWS), list, describe, list-pods, get-logs, get-operator-logs (the operator's pod found by the
label AWS's add-on gives it) and delete. The pods, their logs and the job's
conditions come from the sandbox's emulation of the training operator (docs/sandbox.md,
"HyperPod training operator"); the CLI is the judge of names, labels and status shape.
"""

from __future__ import annotations

import re

import pytest

from tests.clusters.helpers import BODY
from tests.hyp.conftest import Hyp
from tests.stack import Stack

JOB = "hyp-demo"
IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
# one created cluster for the module (tests/hyp/conftest.py `podplane_cluster`), on its event loop
pytestmark = pytest.mark.asyncio(loop_scope="module")


def settle(stack: Stack, seconds: float = 0.0) -> None:
    if seconds:
        stack.advance(seconds)
    stack.sandbox.call(stack.sandbox.kube.settle())


def status_of(hyp: Hyp, job: str) -> str:
    """The STATUS column of `hyp list hyp-pytorch-job` (the last True condition)."""
    for line in hyp.run("list", "hyp-pytorch-job").stdout.splitlines():
        if line.startswith(job + " "):
            return line.split()[2]
    raise AssertionError(f"{job} is not listed")


def listed_pods(hyp: Hyp, job: str) -> list[str]:
    out = hyp.run("list-pods", "hyp-pytorch-job", "--job-name", job).stdout
    assert f"Pods for job: {job}" in out, out
    return re.findall(rf"^({re.escape(job)}-\S+)\s+default\s*$", out, re.MULTILINE)


def create(hyp: Hyp, job: str, replicas: int) -> None:
    hyp.run("create", "hyp-pytorch-job", "--job-name", job, "--image", IMAGE,
            "--instance-type", BODY["instance_type"], "--replica-count", str(replicas))


async def test_hyp_pytorch_job_cycle(podplane_cluster: Stack, hyp_on: Hyp) -> None:
    stack, hyp = podplane_cluster, hyp_on
    hyp.run("set-cluster-context", "--cluster-name", BODY["name"])
    create(hyp, JOB, 1)
    settle(stack)
    assert status_of(hyp, JOB) == "Created"
    assert JOB in hyp.run("describe", "hyp-pytorch-job", "--job-name", JOB).stdout

    settle(stack, 10)  # scheduled, image pulled, container started
    assert listed_pods(hyp, JOB) == [f"{JOB}-pod-0"]
    assert status_of(hyp, JOB) == "Running"
    settle(stack, 10)
    logs = hyp.run("get-logs", "hyp-pytorch-job", "--job-name", JOB,
                   "--pod-name", f"{JOB}-pod-0").stdout
    assert f"Listing logs for pod: {JOB}-pod-0" in logs
    # nprocPerNode "auto" on one GPU: one worker per pod, one pod
    assert "initializing process group (backend=nccl, world_size=1)" in logs, logs
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z \[rank 0\] step 10 ", logs), logs
    # the operator's own pod, found in aws-hyperpod by its `hp-training-control-plane` label
    operator = hyp.run("get-operator-logs", "hyp-pytorch-job", "--since-hours", "1")
    assert "No training operator pod found" not in operator.stdout + operator.stderr, operator
    assert "PyTorch Operator Logs" in operator.stdout, operator.stdout

    settle(stack, 60)  # the training exits 0
    assert status_of(hyp, JOB) == "Completed"
    described = hyp.run("describe", "hyp-pytorch-job", "--job-name", JOB).stdout
    assert re.search(r"Type:\s+Running\s+Status:\s+False", described), described
    assert listed_pods(hyp, JOB) == [f"{JOB}-pod-0"]  # the pods stay for their logs

    hyp.run("delete", "hyp-pytorch-job", "--job-name", JOB)
    settle(stack)
    assert JOB not in hyp.run("list", "hyp-pytorch-job").stdout
    store = stack.sandbox.kube.get(BODY["name"]).store  # the job's pods went with it
    assert [p["metadata"]["name"] for p in store.items("pods", "default")] == []


async def test_pods_wait_pending_without_gpu_capacity(podplane_cluster: Stack, hyp_on: Hyp) -> None:
    """Three one-GPU replicas on two one-GPU nodes: the scheduler places two, the third stays
    Pending (Unschedulable), and the job never reaches Running."""
    stack, hyp = podplane_cluster, hyp_on
    hyp.run("set-cluster-context", "--cluster-name", BODY["name"])
    create(hyp, "wide", 3)
    settle(stack, 30)
    assert listed_pods(hyp, "wide") == ["wide-pod-0", "wide-pod-1", "wide-pod-2"]
    store = stack.sandbox.kube.get(BODY["name"]).store
    pods = {p["metadata"]["name"]: p for p in store.items("pods", "default")}
    phases = sorted(p["status"]["phase"] for p in pods.values())
    assert phases == ["Pending", "Running", "Running"], phases
    pending = next(p for p in pods.values() if p["status"]["phase"] == "Pending")
    assert not pending["spec"].get("nodeName")
    scheduled = next(c for c in pending["status"]["conditions"] if c["type"] == "PodScheduled")
    assert scheduled["reason"] == "Unschedulable"
    assert "Insufficient nvidia.com/gpu" in scheduled["message"], scheduled
    assert status_of(hyp, "wide") == "Created"
    hyp.run("delete", "hyp-pytorch-job", "--job-name", "wide")  # the GPUs free for the module
    settle(stack)
    assert store.items("pods", "default") == []
