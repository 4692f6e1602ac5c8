"""Is this node sick, why, since when, and which rung of investigate -> reboot -> replace
comes next (pure).

Sources (../shared/crds/hyperpod-node-labels.md): the `sagemaker.amazonaws.com/` labels
`node-health-status` (Schedulable | Unschedulable | UnschedulablePendingReboot |
UnschedulablePendingReplacement) and `deep-health-check-status` (InProgress | Passed |
Failed) from the AWS "Node labels" page; the fault-type / fault-reason labels, spelt singular
or plural (unresolved there, so both are read); the health taint and the node condition whose
type is the fault type (the health monitoring agent's "four-part response"); the instance
statuses of ClusterInstanceStatusDetails; BatchRebootClusterNodes / BatchReplaceClusterNodes
as the manual recovery, NodeRecovery Automatic | None per cluster; HyperPod's cluster events
about the instance (domain/diagnostics/cloud_evidence.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.domain.diagnostics.cloud_evidence import (
    event_evidence,
    unresolved,
    with_evidence,
)
from podplane.domain.diagnostics.verdict import (
    Evidence,
    Finding,
    Status,
    SuggestedCall,
    Verdict,
    healthy,
)

Shape = dict[str, Any]
SM = "sagemaker.amazonaws.com/"
HEALTH = SM + "node-health-status"
DEEP = SM + "deep-health-check-status"
FAULT_TYPE, FAULT_REASON = ("fault-type", "fault-types"), ("fault-reason", "fault-reasons")
IN_PROGRESS = {"Pending", "DeepHealthCheckInProgress", "SystemUpdating", "ShuttingDown"}
HP_LIST, HP_DESCRIBE = "hyperpod:ListClusterNodes", "hyperpod:DescribeClusterNode"
LABELS, TAINTS = "kubernetes:Node labels", "kubernetes:Node taints"
CONDITIONS, EVENT = "kubernetes:Node conditions", "kubernetes:Event"
MAX_EVENTS = 5


@dataclass(frozen=True)
class NodeFacts:
    """What was read about one node. `kube` is None when no Node is registered;
    `kube_reachable` False when Kubernetes did not answer at all."""

    cluster: str
    instance_id: str
    summary: Shape  # the node's ClusterNodeSummary (ListClusterNodes)
    kube: Shape | None = None
    events: tuple[Shape, ...] = ()
    node_recovery: str | None = None
    kube_reachable: bool = True
    cluster_events: tuple[Shape, ...] = ()  # ListClusterEvents about the instance, newest first
    notes: tuple[str, ...] = ()  # what could not be read


def ladder(cluster: str, node: str) -> tuple[SuggestedCall, SuggestedCall, SuggestedCall]:
    """The escalation, each rung the tool that does it with its real arguments and cost."""
    args = {"cluster": cluster, "node": node}
    return (
        SuggestedCall("node_describe", args, "None: reads HyperPod and Kubernetes, changes "
                      "nothing.", mutates=False),
        SuggestedCall("node_reboot", args, "Pods on the node stop while it restarts (minutes); "
                      "instance storage is kept.", mutates=True),
        SuggestedCall("node_replace", {**args, "confirm": True}, "A new instance: data on "
                      "instance storage (local NVMe, /opt/dlami/nvme) is lost, pods are moved "
                      "away, lifecycle scripts and deep health checks run again (up to hours). "
                      "EBS and shared storage stay.", mutates=True),
    )


def diagnose(f: NodeFacts) -> Verdict:
    target = f"cluster/{f.cluster}/node/{f.instance_id}"
    investigate, reboot, replace = rungs = ladder(f.cluster, f.instance_id)
    status = str((f.summary.get("InstanceStatus") or {}).get("Status", ""))
    seen = _instance(f.summary)
    if status != "Running":
        return _not_running(f, target, status, seen, rungs)
    if not f.kube_reachable:
        return Verdict(target, "Kubernetes could not be reached: only HyperPod's view is known "
                       "(the instance is Running).", (Finding(
                           "kubernetes_unreachable", Status.WARN, "The cluster's Kubernetes API "
                           "did not answer.", "Check the cluster's endpoint and podplane's "
                           "access entry (podplane doctor --cluster).", (seen,)),),
                       investigate, rungs)
    if f.kube is None:
        return Verdict(target, "The instance is Running but its Kubernetes Node has not "
                       "registered.", (Finding("not_registered", Status.WARN, "No Node "
                       f"hyperpod-{f.instance_id} in Kubernetes.", "Wait a few minutes after "
                       "a create or replace; if it never registers, replace the node.",
                       (seen,)),), investigate, rungs)
    findings, action, since = _kube_findings(f, seen)
    findings += _event_findings(f.events, bool(findings))
    findings = _with_cluster_events(f, findings)
    if not findings:
        return healthy(target, *f.notes)
    chosen = {"reboot": reboot, "replace": replace}.get(action or "", investigate)
    return Verdict(target, _conclusion(findings, action), tuple(findings),
                   chosen, rungs, since, _auto_note(f, action) + _elsewhere(f, findings)
                   + f.notes)


def _elsewhere(f: NodeFacts, findings: list[Finding]) -> tuple[str, ...]:
    """What a flagged node's verdict cannot show, and where it is. The health-monitoring
    agent writes its detections (`HealthMonitoringAgentDetectionEvent`, log stream
    `SagemakerHealthMonitoringAgent`) to CloudWatch Logs (AWS docs, HMA page, in
    ../shared/crds/hyperpod-node-labels.md section 4; the log group is
    `/aws/sagemaker/Clusters/<name>/<id>`, awsome-distributed-training
    1.architectures/5.sagemaker-hyperpod/Extensions/observability/README.md). No HyperPod API
    returns the deep health checks' per-check results: DescribeClusterNode and
    ListClusterNodes give the instance status only (botocore sagemaker
    ClusterInstanceStatusDetails). podplane reads neither from CloudWatch Logs."""
    if not any(x.check == "health_label" for x in findings):
        return ()
    return (f"The agent's detection messages and the deep health checks' own logs are in "
            f"CloudWatch Logs (log group /aws/sagemaker/Clusters/{f.cluster}/<cluster id>, "
            "stream SagemakerHealthMonitoringAgent for the agent), which podplane does not "
            "read.",)


def _with_cluster_events(f: NodeFacts, findings: list[Finding]) -> list[Finding]:
    """HyperPod's events about the instance: more evidence for a cause found elsewhere, or a
    finding of their own when the newest is a warning or error nothing has answered since."""
    proof = event_evidence(f.cluster_events)
    if any(x.status is not Status.OK for x in findings):
        return with_evidence(findings, proof)
    if unresolved(f.cluster_events):
        return findings + [Finding("hyperpod_events", Status.WARN, "HyperPod's newest event "
                                   "about the instance is a warning: "
                                   f"{f.cluster_events[0].get('Description')}", "Read it "
                                   "(aws sagemaker describe-cluster-event), then diagnose "
                                   "again before acting.", proof)]
    return findings


def _instance(summary: Shape) -> Evidence:
    s = summary.get("InstanceStatus") or {}
    message = f" ({s['Message']})" if s.get("Message") else ""
    return Evidence(HP_LIST, f"InstanceStatus {s.get('Status', '?')}{message}, instance type "
                    f"{summary.get('InstanceType', '?')}, group "
                    f"{summary.get('InstanceGroupName', '?')}.")


def _not_running(f: NodeFacts, target: str, status: str, seen: Evidence,
                 rungs: tuple[SuggestedCall, ...]) -> Verdict:
    if status in IN_PROGRESS:
        return Verdict(target, f"The instance is {status}: HyperPod is still working on it.",
                       (Finding("instance_status", Status.WARN, f"HyperPod shows {status}.",
                                "Wait, then diagnose again.", (seen,)),), rungs[0], rungs)
    auto = f.node_recovery == "Automatic"
    fix = ("NodeRecovery is Automatic: HyperPod replaces a failed instance itself." if auto
           else "podplane reboots and replaces Running nodes only: delete the node "
           "(node_delete) and scale its group back up.")
    return Verdict(target, f"HyperPod reports the instance {status or 'unknown'}.",
                   (Finding("instance_status", Status.FAIL, f"HyperPod shows {status}.", fix,
                            (seen, *event_evidence(f.cluster_events))),), rungs[0], rungs,
                   notes=f.notes)


def _label(labels: dict[str, str], names: tuple[str, ...]) -> str | None:
    return next((labels[SM + n] for n in names if SM + n in labels), None)


def _kube_findings(f: NodeFacts, seen: Evidence) -> tuple[list[Finding], str | None,
                                                          str | None]:
    """(findings, reboot | replace | None, since) from the Node's labels, taints, conditions."""
    node = f.kube or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    conditions = (node.get("status") or {}).get("conditions") or []
    health, deep = labels.get(HEALTH), labels.get(DEEP)
    fault = _label(labels, FAULT_TYPE)
    fault_condition = next((c for c in conditions if fault and c.get("type") == fault
                            and c.get("status") == "True"), None)
    proof = [seen] + _label_evidence(labels) + _taints(node) + \
        ([_condition(fault_condition)] if fault_condition else [])
    since = (fault_condition or {}).get("lastTransitionTime")
    findings: list[Finding] = []
    action: str | None = None
    if health in ("UnschedulablePendingReboot", "UnschedulablePendingReplacement") or \
            deep == "Failed":
        action = "replace" if health == "UnschedulablePendingReplacement" or deep == "Failed" \
            else "reboot"
        reason = _label(labels, FAULT_REASON)
        what = f"fault {fault}: {reason}" if fault else "no fault type label"
        findings.append(Finding("health_label", Status.FAIL, f"HyperPod health checks flagged "
                                f"the node for {action} ({what}).", f"{action} the node.",
                                tuple(proof)))
    elif health == "Unschedulable" or deep == "InProgress":
        findings.append(Finding("deep_health_check", Status.WARN, "Deep health checks are "
                                "running; the node takes no workloads until they pass.",
                                "Wait (they take 60-90 minutes), then diagnose again.",
                                tuple(proof)))
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    if ready is not None and ready.get("status") != "True":
        action = action or "reboot"
        since = since or ready.get("lastTransitionTime")
        findings.append(Finding("kubernetes_not_ready", Status.FAIL, "The kubelet reports "
                                f"NotReady ({ready.get('reason')}).", "Reboot the node.",
                                (seen, _condition(ready))))
    return findings, action, since


def _label_evidence(labels: dict[str, str]) -> list[Evidence]:
    shown = [f"{k}={v}" for k, v in sorted(labels.items()) if k in (HEALTH, DEEP) or
             k.removeprefix(SM) in FAULT_TYPE + FAULT_REASON]
    return [Evidence(LABELS, ", ".join(shown))] if shown else []


def _taints(node: Shape) -> list[Evidence]:
    ours = [t for t in (node.get("spec") or {}).get("taints") or []
            if str(t.get("key", "")).startswith(SM)]
    return [Evidence(TAINTS, f"{t['key']}={t.get('value', '')}:{t.get('effect')}")
            for t in ours]


def _condition(c: Shape) -> Evidence:
    return Evidence(CONDITIONS, f"{c.get('type')}={c.get('status')} reason {c.get('reason')}: "
                    f"{c.get('message')} (since {c.get('lastTransitionTime')})")


def _event_findings(events: tuple[Shape, ...], has_cause: bool) -> list[Finding]:
    """Warning events on the Node; a WARN finding of their own only when nothing else was
    found (otherwise they are more evidence for the cause, listed after it)."""
    warnings = [e for e in events if e.get("type") == "Warning"][-MAX_EVENTS:]
    if not warnings:
        return []
    proof = tuple(Evidence(EVENT, f"{e.get('reason')}: {e.get('message')} (last "
                           f"{e.get('lastTimestamp') or e.get('eventTime')}, count "
                           f"{e.get('count', 1)})") for e in warnings)
    if has_cause:
        return [Finding("kubernetes_events", Status.OK, "Recent warning events on the node.",
                        "", proof)]
    return [Finding("kubernetes_events", Status.WARN, "No fault is flagged, but Kubernetes "
                    "recorded warnings for the node.", "Read them (node_describe) before "
                    "acting.", proof)]


def _conclusion(findings: list[Finding], action: str | None) -> str:
    first = next(f for f in findings if f.status is not Status.OK)
    if action is None:
        return first.detail
    return f"{first.detail} Next rung: {action}."


def _auto_note(f: NodeFacts, action: str | None) -> tuple[str, ...]:
    labels = ((f.kube or {}).get("metadata") or {}).get("labels") or {}
    if f.node_recovery == "Automatic" and action and \
            str(labels.get(HEALTH, "")).startswith("UnschedulablePending"):
        return (f"NodeRecovery is Automatic: HyperPod will {action} the node itself; acting "
                "now only saves the wait.",)
    return ()
