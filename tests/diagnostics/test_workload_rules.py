"""The pure rules of the job and endpoint diagnoses for signals the sandbox does not make:
NCCL's own errors and a restarted container's previous run, an unreadable log, a SLOW rule,
a failing readiness probe (kubelet's Unhealthy event) and a Deployment past its progress
deadline (Kubernetes docs, "Deployments", Failed Deployment)."""

from __future__ import annotations

from typing import Any

from podplane.domain.diagnostics import endpoint, job
from podplane.domain.diagnostics.job_logs import PodLog
from podplane.domain.diagnostics.verdict import HEALTHY

NCCL = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:2006, unhandled system error (run with NCCL_DEBUG=INFO for "
        "details), NCCL version 2.21.5")


def a_job(kind: str = "PyTorchJob", **status: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": "train"}, "spec": {"runPolicy": {
        "backoffLimit": 3, "jobMaxRetryCount": 2, "logMonitoringConfiguration": [
            {"name": "Throughput", "logPattern": r"throughput (\d+)", "metricThreshold": 100,
             "operator": "lt"}]}}, "status": status}


def restarted(name: str, node: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeName": node}, "status": {
        "phase": "Running", "containerStatuses": [{
            "name": "pytorch", "restartCount": 1, "state": {"running": {}},
            "lastState": {"terminated": {"reason": "Error", "exitCode": 1}}}]}}


def test_an_nccl_error_of_a_previous_run_is_quoted_with_pod_and_node() -> None:
    pods = (restarted("train-worker-0", "n1"), restarted("train-worker-1", "n2"))
    v = job.diagnose(job.JobFacts("gpu", a_job(conditions=[
        {"type": "Running", "status": "True"}]), pods, logs=(
        PodLog("train-worker-0", "n1", "pytorch", True, ("step 10", NCCL)),
        PodLog("train-worker-1", "n2", "pytorch", True, error="log rotated"))))
    nccl = next(f for f in v.findings if f.check == "nccl_error")
    assert nccl.evidence[0].source == "pod log"
    assert nccl.evidence[0].detail == f"pod train-worker-0 (previous run) on node n1: {NCCL}"
    assert "NCCL failed" in v.conclusion
    assert v.notes == ("The log of pod train-worker-1 could not be read: log rotated",)
    # the job still runs on its pods: no NCCL test on nodes that are busy
    assert v.next is not None and v.next.tool == "job_logs"


def test_a_slow_rule_restart_is_named_and_a_plain_log_is_no_finding() -> None:
    events = ({"type": "Warning", "reason": "JobRestarting", "lastTimestamp":
               "2026-12-03T10:00:00Z", "involvedObject": {"kind": "HyperPodPyTorchJob"},
               "message": "restart 1 of 2: log monitoring rule Throughput on pod p: SLOW: "
               "metric 80 lt 100 for 1 data point(s)"},)
    v = job.diagnose(job.JobFacts("gpu", a_job("HyperPodPyTorchJob", restartCount=1,
                                               conditions=[{"type": "Running",
                                                            "status": "True"}]),
                                  events=events))
    (rule,) = v.findings
    assert rule.check == "hang_rule" and rule.status.value == "warn"
    assert "SLOW at 2026-12-03T10:00:00Z" in rule.detail and "1 of 2" in rule.detail
    assert "SLOW when the metric lt 100" in rule.evidence[1].detail
    fine = job.diagnose(job.JobFacts("gpu", a_job(conditions=[
        {"type": "Running", "status": "True"}]), logs=(
        PodLog("p", "n1", "pytorch", True, ("step 10 | loss 1.2",)),)))
    assert fine.conclusion == HEALTHY and fine.findings == ()


def a_deployment(**status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "qwen", "labels": {"podplane.io/engine": "vllm"}},
            "spec": {"replicas": 1}, "status": status}


def running(name: str, ready: bool) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"podplane.io/endpoint": "qwen"}},
            "spec": {"nodeName": "n1", "containers": [{"image": "img:1"}]},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True" if ready else "False"}],
                "containerStatuses": [{"name": "engine", "state": {"running": {}}}]}}


SERVICE = {"metadata": {"name": "qwen"}, "spec": {"selector": {"podplane.io/endpoint": "qwen"}}}


def test_a_failing_readiness_probe_and_a_rollout_past_its_deadline() -> None:
    unhealthy = {"reason": "Unhealthy", "type": "Warning", "involvedObject": {"name": "q-1"},
                 "message": "Readiness probe failed: Get \"http://10.0.0.5:8000/health\": "
                 "dial tcp 10.0.0.5:8000: connect: connection refused"}
    v = endpoint.diagnose(endpoint.EndpointFacts(
        "gpu", a_deployment(replicas=1, updatedReplicas=1, conditions=[
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]),
        SERVICE, (running("q-1", False),), (unhealthy,)))
    checks = [f.check for f in v.findings]
    assert checks == ["readiness", "no_ready_endpoints", "rollout_stuck"], checks
    assert v.conclusion.startswith("Pod q-1 fails its readiness probe: Readiness probe failed")
    assert v.next is not None and v.next.tool == "endpoint_get" and not v.next.mutates
    fine = endpoint.diagnose(endpoint.EndpointFacts(
        "gpu", a_deployment(replicas=1, updatedReplicas=1, readyReplicas=1), SERVICE,
        (running("q-1", True),)))
    assert fine.conclusion == HEALTHY and fine.findings == ()
    gone = endpoint.diagnose(endpoint.EndpointFacts(
        "gpu", a_deployment(replicas=1, updatedReplicas=1), None, (running("q-1", True),)))
    assert [f.check for f in gone.findings] == ["no_service"]
