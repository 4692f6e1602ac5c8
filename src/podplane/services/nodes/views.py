"""A node as podplane shows it: HyperPod's instance status joined with the Kubernetes Node's
health labels, GPU allocation, and the next step of the escalation investigate -> reboot ->
replace."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

Shape = dict[str, Any]
SM = "sagemaker.amazonaws.com/"
GPU = "nvidia.com/gpu"
IN_PROGRESS = {"Pending", "DeepHealthCheckInProgress", "SystemUpdating", "ShuttingDown"}
STORAGE_WARNING = ("Replacing a node terminates its instance: data on instance storage "
                   "(local NVMe, /opt/dlami/nvme) is lost. EBS and shared storage stay.")


# The shapes, declared once: the REST models (api/routers/nodes.py) derive from them. They stay
# dicts, not dataclasses, because the 1,000-node table is serialised straight from them.

class EscalationStepView(TypedDict):
    action: str
    tool: str
    why: str
    suggested: bool


class Assessment(TypedDict):
    state: str  # healthy | in_progress | unhealthy | unknown
    suggested_action: str | None
    escalation: list[EscalationStepView]
    note: str | None


class Signals(TypedDict):
    instance_status: str
    instance_message: str | None
    kubernetes_ready: bool
    node_health_status: str | None
    deep_health_check_status: str | None
    fault_type: str | None
    fault_reason: str | None


class HealthView(Signals, Assessment):
    pass


class GpuView(TypedDict):
    capacity: int
    allocatable: int
    allocated: int


class NodeView(TypedDict):
    id: str
    logical_id: str | None
    instance_group: str | None
    instance_type: str | None
    launch_time: datetime | None
    kubernetes_node: str | None
    health: HealthView
    gpus: GpuView


class NodeDetailView(NodeView):
    availability_zone: str | None
    private_ip: str | None
    capacity_type: str | None
    private_dns: str | None


def label(labels: dict[str, str], *names: str) -> str | None:
    """The first label present; HyperPod spells fault labels singular and plural."""
    return next((labels[SM + n] for n in names if SM + n in labels), None)


def gpu_allocation(kube: Shape | None, pods: list[Shape]) -> GpuView:
    status = (kube or {}).get("status") or {}
    used = 0
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for c in (pod.get("spec") or {}).get("containers") or []:
            res = c.get("resources") or {}
            used += int((res.get("requests") or res.get("limits") or {}).get(GPU, 0) or 0)
    return {"capacity": int((status.get("capacity") or {}).get(GPU, 0) or 0),
            "allocatable": int((status.get("allocatable") or {}).get(GPU, 0) or 0),
            "allocated": used}


def _ready(kube: Shape | None) -> bool:
    conditions = ((kube or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def health(summary: Shape, kube: Shape | None, node_recovery: str | None,
           kube_reachable: bool = True) -> HealthView:
    labels = ((kube or {}).get("metadata") or {}).get("labels") or {}
    status = str((summary.get("InstanceStatus") or {}).get("Status", ""))
    signals: Signals = {
        "instance_status": status,
        "instance_message": (summary.get("InstanceStatus") or {}).get("Message") or None,
        "kubernetes_ready": _ready(kube),
        "node_health_status": label(labels, "node-health-status"),
        "deep_health_check_status": label(labels, "deep-health-check-status"),
        "fault_type": label(labels, "fault-type", "fault-types"),
        "fault_reason": label(labels, "fault-reason", "fault-reasons"),
    }
    if not kube_reachable and status == "Running":
        return {**signals, "state": "unknown", "suggested_action": None, "escalation": [],
                "note": "Kubernetes could not be reached: only HyperPod's status is known."}
    return {**signals, **assess(signals, kube is not None, node_recovery)}


def assess(h: Signals, registered: bool, node_recovery: str | None) -> Assessment:
    """healthy | in_progress | unhealthy, and what to do next (investigate -> reboot ->
    replace)."""
    status, label_ = h["instance_status"], h["node_health_status"] or ""
    if status in IN_PROGRESS:
        return {"state": "in_progress", "suggested_action": None, "escalation": [],
                "note": f"The instance is {status}; wait for it (node_describe shows progress)."}
    wants_replace = label_ == "UnschedulablePendingReplacement" or \
        h["deep_health_check_status"] == "Failed"
    wants_reboot = label_ == "UnschedulablePendingReboot" or status == "Failure" or \
        (registered and not h["kubernetes_ready"])
    if status == "Running" and registered and not (wants_replace or wants_reboot):
        return {"state": "healthy", "suggested_action": None, "escalation": [], "note": None}
    if status == "Running" and not registered:
        return {"state": "in_progress", "suggested_action": None, "escalation": [],
                "note": "Running in HyperPod; its Kubernetes Node has not registered yet."}
    action = "replace" if wants_replace else "reboot"
    auto = node_recovery == "Automatic"
    note = (f"HyperPod flagged it for {action} and will {action} it automatically "
            "(NodeRecovery: Automatic); act by hand only if it does not recover."
            if auto and label_.startswith("UnschedulablePending") else
            f"Investigate first, then {action}.")
    return {"state": "unhealthy", "suggested_action": action, "escalation": escalation(action),
            "note": note}


def escalation(action: str) -> list[EscalationStepView]:
    steps: list[EscalationStepView] = [
        {"action": "investigate", "tool": "node_describe",
         "why": "Read the fault type and reason, the node's conditions and events "
                "(kubectl describe node) and the job logs on it; no change is made.",
         "suggested": False},
        {"action": "reboot", "tool": "node_reboot",
         "why": "Clears transient faults (hung GPU, driver/Xid errors); keeps instance storage.",
         "suggested": False},
        {"action": "replace", "tool": "node_replace", "why": "A new instance for hardware "
         "faults that survive a reboot. " + STORAGE_WARNING, "suggested": False},
    ]
    for step in steps:
        step["suggested"] = step["action"] == action
    return steps


def node_view(summary: Shape, kube: Shape | None, pods: list[Shape],
              node_recovery: str | None, *, kube_reachable: bool = True) -> NodeView:
    return {
        "id": summary["InstanceId"],
        "logical_id": summary.get("NodeLogicalId"),
        "instance_group": summary.get("InstanceGroupName"),
        "instance_type": summary.get("InstanceType"),
        "launch_time": summary.get("LaunchTime"),
        "kubernetes_node": (kube or {}).get("metadata", {}).get("name"),
        "health": health(summary, kube, node_recovery, kube_reachable),
        "gpus": gpu_allocation(kube, pods),
    }


# -- the whole fleet at once (issue 21: 1,000 nodes) ------------------------------------------

HEALTH_STATES = ("healthy", "in_progress", "unhealthy", "unknown")


def pods_by_node(pods: list[Shape]) -> dict[str, list[Shape]]:
    out: dict[str, list[Shape]] = {}
    for pod in pods:
        where = (pod.get("spec") or {}).get("nodeName")
        if where:
            out.setdefault(where, []).append(pod)
    return out


def join(summaries: list[Shape], kube: dict[str, Shape] | None,
         pods: dict[str, list[Shape]], node_recovery: str | None) -> list[NodeView]:
    """HyperPod node <-> Kubernetes Node (by instance id) <-> its pods' GPU requests, once
    for the whole fleet; `kube` is None when Kubernetes could not be reached."""
    out = []
    for s in summaries:
        k = kube.get(s["InstanceId"]) if kube is not None else None
        name = (k or {}).get("metadata", {}).get("name", "")
        out.append(node_view(s, k, pods.get(name, []), node_recovery,
                             kube_reachable=kube is not None))
    return out


def select(nodes: list[NodeView], *, group: str | None = None, health: str | None = None,
           after: str | None = None,
           limit: int | None = None) -> tuple[list[NodeView], str | None]:
    """Filter by group and health state, then one page in id order starting after the
    node id `after`; the second value is the cursor of the next page (None on the last)."""
    chosen = [n for n in nodes
              if (group is None or n["instance_group"] == group)
              and (health is None or n["health"]["state"] == health)]
    chosen.sort(key=lambda n: n["id"])
    if after is not None:
        chosen = [n for n in chosen if n["id"] > after]
    if limit is None or len(chosen) <= limit:
        return chosen, None
    return chosen[:limit], chosen[limit - 1]["id"]
