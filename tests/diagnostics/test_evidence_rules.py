"""HyperPod's cluster events and EKS add-on health issues as evidence (pure, no cloud): more
proof for a cause found elsewhere, a finding of their own only while the newest event is an
unanswered warning, and the health issues of a failed add-on step."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from podplane.domain.diagnostics import node, operation
from podplane.domain.diagnostics.verdict import HEALTHY
from tests.diagnostics.test_rules import IID, facts, kube_node, op, step

EVENTS = "hyperpod:ListClusterEvents"


def event(level: str, description: str, minute: int) -> dict[str, Any]:
    return {"EventLevel": level, "Description": description, "ResourceType": "Instance",
            "InstanceId": IID, "EventTime": datetime(2026, 1, 1, 0, minute, tzinfo=UTC)}


FLAGGED = event("Warn", "Instance failed a health check (NvidiaErrorReboot).", 1)
REBOOTED = event("Info", "Instance is being rebooted.", 2)


def test_events_are_evidence_for_a_flagged_node_newest_first() -> None:
    v = node.diagnose(facts(kube=kube_node(node_health_status="UnschedulablePendingReboot"),
                            cluster_events=(REBOOTED, FLAGGED)))
    proof = [e for e in v.findings[0].evidence if e.source == EVENTS]
    assert [e.detail.split(" ")[0] for e in proof] == ["Info", "Warn"]
    assert f"Instance {IID}: Instance failed a health check" in proof[1].detail
    assert "2026-01-01T00:01:00+00:00" in proof[1].detail


def test_an_unanswered_warning_is_a_finding_and_an_answered_one_is_not() -> None:
    healthy_node = kube_node(node_health_status="Schedulable")
    v = node.diagnose(facts(kube=healthy_node, cluster_events=(FLAGGED,)))
    assert [f.check for f in v.findings] == ["hyperpod_events"]
    assert v.status.value == "warn" and "health check" in v.conclusion
    assert v.next is not None and not v.next.mutates  # investigate first
    after = node.diagnose(facts(kube=healthy_node, cluster_events=(REBOOTED, FLAGGED)))
    assert after.conclusion == HEALTHY and after.findings == ()


def test_an_instance_that_is_not_running_shows_its_events_and_unread_events_are_a_note() -> None:
    failed = event("Error", "Instance failed to launch.", 3)
    v = node.diagnose(facts(summary={**facts().summary, "InstanceStatus": {"Status": "Failure"}},
                            cluster_events=(failed,), notes=("events unread",)))
    assert [e.source for e in v.findings[0].evidence] == ["hyperpod:ListClusterNodes", EVENTS]
    assert v.notes == ("events unread",)


def test_a_failed_addon_step_shows_each_unhealthy_addons_issues_and_alarming_events() -> None:
    error = {"code": "addon_failed", "message": "EKS add-ons did not become ACTIVE",
             "hint": None}
    addons = ({"addonName": "vpc-cni", "status": "ACTIVE", "health": {"issues": []}},
              {"addonName": "coredns", "status": "DEGRADED", "health": {"issues": [
                  {"code": "InsufficientNumberOfReplicas", "message": "too few replicas",
                   "resourceIds": ["coredns"]}]}})
    group = {**event("Error", "We currently do not have sufficient capacity.", 4),
             "ResourceType": "InstanceGroup", "InstanceId": None, "InstanceGroupName": "w"}
    facts_ = replace(op("failed", step("node_dependencies", "failed", error)),
                     addons=addons, cluster_events=(REBOOTED, group))
    v = operation.diagnose(facts_)
    (finding,) = v.findings
    assert "an EKS add-on failed" in v.conclusion
    assert [(e.source, e.detail) for e in finding.evidence[1:]] == [
        ("eks:DescribeAddon", "coredns DEGRADED: InsufficientNumberOfReplicas: too few replicas "
                              "(coredns)"),
        (EVENTS, "Error 2026-01-01T00:04:00+00:00 InstanceGroup w: We currently do not have "
                 "sufficient capacity.")]


def test_a_running_step_shows_hyperpods_errors_meanwhile() -> None:
    group = {**event("Error", "No capacity.", 5), "ResourceType": "InstanceGroup",
             "InstanceId": None, "InstanceGroupName": "w"}
    v = operation.diagnose(replace(op("running", step("hyperpod", "running")),
                                   cluster_events=(group,)))
    assert v.next is not None and v.next.tool == "operation_wait"
    assert [e.source for e in v.findings[0].evidence] == [EVENTS]
