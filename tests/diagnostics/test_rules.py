"""The verdict rules alone (pure, no cloud): each signal of ../shared/crds/hyperpod-node-labels.md
and each classified step error gives its cause and the right rung or retry."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from podplane.domain.diagnostics import job, node, operation
from podplane.domain.diagnostics.verdict import HEALTHY

IID = "i-0123456789abcdef0"
SM = "sagemaker.amazonaws.com/"


def summary(status: str = "Running", message: str | None = None) -> dict[str, Any]:
    return {"InstanceId": IID, "InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge",
            "InstanceStatus": {"Status": status, **({"Message": message} if message else {})}}


def kube_node(ready: bool = True, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": f"hyperpod-{IID}",
                         "labels": {SM + k.replace("_", "-"): v for k, v in labels.items()}},
            "spec": {}, "status": {"conditions": [
                {"type": "Ready", "status": "True" if ready else "False",
                 "reason": "KubeletReady" if ready else "KubeletNotReady",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def facts(**kw: Any) -> node.NodeFacts:
    return node.NodeFacts("gpu", IID, kw.pop("summary", summary()), **kw)


def test_a_node_flagged_for_replacement_suggests_replace_with_confirm_and_its_cost() -> None:
    v = node.diagnose(facts(kube=kube_node(node_health_status="UnschedulablePendingReplacement",
                                            fault_types="NvidiaErrorTerminate"),
                            node_recovery="Automatic"))
    assert v.next is not None and v.next.tool == "node_replace"
    assert v.next.arguments == {"cluster": "gpu", "node": IID, "confirm": True}
    assert "lost" in v.next.cost and v.next.mutates
    assert "NvidiaErrorTerminate" in v.conclusion and "replace" in v.conclusion
    assert v.notes and "Automatic" in v.notes[0]  # HyperPod would do it itself


def test_a_failed_deep_health_check_means_replace() -> None:
    v = node.diagnose(facts(kube=kube_node(deep_health_check_status="Failed",
                                            node_health_status="Schedulable")))
    assert v.next is not None and v.next.tool == "node_replace"


def test_deep_health_checks_in_progress_are_a_wait_not_a_repair() -> None:
    v = node.diagnose(facts(kube=kube_node(deep_health_check_status="InProgress",
                                            node_health_status="Unschedulable")))
    assert v.status.value == "warn" and v.next is not None and v.next.tool == "node_describe"


def test_a_not_ready_kubelet_suggests_a_reboot_since_its_transition() -> None:
    v = node.diagnose(facts(kube=kube_node(ready=False, node_health_status="Schedulable")))
    assert [f.check for f in v.findings] == ["kubernetes_not_ready"]
    assert v.next is not None and v.next.tool == "node_reboot"
    assert v.since == "2026-01-01T00:00:00Z"


def test_statuses_other_than_running_are_said_as_hyperpod_says_them() -> None:
    pending = node.diagnose(facts(summary=summary("DeepHealthCheckInProgress")))
    assert "DeepHealthCheckInProgress" in pending.conclusion and pending.status.value == "warn"
    failed = node.diagnose(facts(summary=summary("Failure", "Lifecycle script failed")))
    assert failed.status.value == "fail"
    assert "Lifecycle script failed" in failed.findings[0].evidence[0].detail
    assert "node_delete" in failed.findings[0].fix  # podplane reboots only Running nodes


def test_without_kubernetes_only_hyperpod_is_known_and_nothing_is_suggested_blind() -> None:
    v = node.diagnose(facts(kube_reachable=False))
    assert v.conclusion != HEALTHY and v.next is not None and not v.next.mutates
    unregistered = node.diagnose(facts(kube=None))
    assert unregistered.findings[0].check == "not_registered"


def test_warning_events_alone_are_a_warning_and_never_healthy() -> None:
    event = {"type": "Warning", "reason": "NodeNotReady", "message": "Node is not ready",
             "lastTimestamp": "2026-01-01T00:01:00Z", "count": 2}
    v = node.diagnose(facts(kube=kube_node(node_health_status="Schedulable"),
                            events=(event, {**event, "type": "Normal"})))
    assert v.status.value == "warn" and len(v.findings[0].evidence) == 1
    assert v.findings[0].evidence[0].source == "kubernetes:Event"
    healthy = node.diagnose(facts(kube=kube_node(node_health_status="Schedulable")))
    assert healthy.conclusion == HEALTHY and healthy.findings == ()


def op(status: str, *steps: dict[str, Any], destroys: bool = False) -> operation.OperationFacts:
    return operation.OperationFacts("op-1", "cluster.create", "cluster/a", status, steps,
                                    destroys)


def step(name: str, status: str, error: dict[str, Any] | None = None,
         history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"name": name, "status": status, "attempt": 1, "error": error, "phase": None,
            "started_at": "2026-01-01T00:00:00Z", "history": history}


def test_capacity_and_quota_failures_name_the_cause_and_keep_the_hint() -> None:
    capacity = operation.diagnose(op("failed", step("network", "succeeded"), step(
        "hyperpod", "failed", {"code": "insufficient_capacity", "message": "We currently do "
                               "not have sufficient capacity", "hint": "Retry later."}),
        step("storage", "pending")))
    assert "capacity" in capacity.conclusion and "'hyperpod'" in capacity.conclusion
    assert "Retry later." in capacity.findings[0].fix
    assert capacity.next is not None
    assert capacity.next.arguments == {"operation_id": "op-1", "step": "hyperpod"}
    quota = operation.diagnose(op("failed", step("hyperpod", "failed", {
        "code": "quota_exceeded", "message": "limit", "hint": None})))
    assert "quota" in quota.conclusion and "Service Quotas" in quota.findings[0].fix


def test_a_destroying_operation_retry_carries_confirm() -> None:
    v = operation.diagnose(op("failed", step("delete", "failed", {"code": "cloud_error",
                                                                  "message": "x"}),
                              destroys=True))
    assert v.next is not None and v.next.arguments["confirm"] is True
    assert "step failed with cloud_error" in v.conclusion


def test_a_running_step_that_backs_off_is_explained_and_waited_for() -> None:
    retrying = {"attempt": 2, "error": {"code": "throttled", "message": "Rate exceeded",
                                         "hint": "backs off"}}
    v = operation.diagnose(op("running", step("eks", "running", history=[
        {"attempt": 1, "error": None}, retrying])))
    assert "rate-limited" in v.conclusion
    assert v.next is not None and v.next.tool == "operation_wait" and not v.next.mutates
    assert "Rate exceeded" in v.findings[0].evidence[0].detail


def test_a_cancelled_operation_offers_to_go_on_from_the_step_it_stopped_at() -> None:
    v = operation.diagnose(op("cancelled", step("network", "succeeded"),
                              step("eks", "cancelled")))
    assert "'eks'" in v.conclusion and v.next is not None
    assert v.next.arguments["step"] == "eks"


def a_job(**status: Any) -> dict[str, Any]:
    return {"kind": "PyTorchJob", "metadata": {"name": "train"},
            "spec": {"runPolicy": {"backoffLimit": 2}}, "status": status}


def a_pod(name: str, node_name: str | None = None, phase: str = "Running",
          **state: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeName": node_name},
            "status": {"phase": phase, "containerStatuses": [
                {"name": "pytorch", "restartCount": 0, **state}] if state else []}}


def test_job_signals_each_give_their_cause_and_a_read_only_next_step() -> None:
    pull = job.diagnose(job.JobFacts("gpu", a_job(), (a_pod(
        "train-master-0", "n1", "Pending", state={"waiting": {
            "reason": "ImagePullBackOff", "message": 'Back-off pulling image "x:1"'}}),),
        events=({"reason": "Failed", "type": "Warning", "message": "Failed to pull image",
                 "involvedObject": {"name": "train-master-0"}},)))
    assert pull.findings[0].check == "image_pull" and len(pull.findings[0].evidence) == 2
    oom = job.diagnose(job.JobFacts("gpu", a_job(), (a_pod("p", "n1", lastState={
        "terminated": {"reason": "OOMKilled", "exitCode": 137}}),)))
    assert [f.check for f in oom.findings] == ["oom_killed"] and "memory" in oom.conclusion
    crashed = job.diagnose(job.JobFacts("gpu", a_job(), (a_pod("p", "n1", state={
        "terminated": {"reason": "Error", "exitCode": 3}}),)))
    assert "code 3" in crashed.conclusion
    assert crashed.next is not None and crashed.next.tool == "job_logs"
    waiting_facts = job.JobFacts("gpu", a_job(), (a_pod("p", None, "Pending"),),
                                 events=({"reason": "FailedScheduling", "type": "Warning",
                                          "message": "0/2 nodes are available: 2 "
                                          "Insufficient nvidia.com/gpu.",
                                          "involvedObject": {"name": "p"}},))
    waiting = job.diagnose(waiting_facts)
    assert "Insufficient nvidia.com/gpu" in waiting.conclusion
    assert waiting.next is not None and waiting.next.tool == "node_list"
    held = job.diagnose(replace(waiting_facts, spaces_holding_gpus=("nb",)))
    assert "Dev spaces hold GPUs: nb." in held.conclusion, held.conclusion
    assert held.next is not None and (held.next.tool, held.next.arguments["name"]) == (
        "space_get", "nb")
    running = job.diagnose(job.JobFacts("gpu", a_job(conditions=[
        {"type": "Running", "status": "True"}]), (a_pod("p", "n1", state={"running": {}}),)))
    assert running.conclusion == HEALTHY and running.findings == ()
