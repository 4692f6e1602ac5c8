"""The health join and escalation rules, on plain HyperPod / Kubernetes shapes."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.services.nodes.views import gpu_allocation, health

SM = "sagemaker.amazonaws.com/"


def summary(status: str = "Running") -> dict[str, Any]:
    return {"InstanceId": "i-0123456789abcdef0", "InstanceStatus": {"Status": status,
                                                                    "Message": ""}}


def kube(ready: bool = True, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": "hyperpod-i-0123456789abcdef0",
                         "labels": {SM + k.replace("_", "-"): v for k, v in labels.items()}},
            "status": {"conditions": [{"type": "Ready", "status": str(ready)}],
                       "capacity": {"nvidia.com/gpu": "8"},
                       "allocatable": {"nvidia.com/gpu": "8"}}}


@pytest.mark.parametrize(("status", "node", "recovery", "state", "action"), [
    ("Running", kube(node_health_status="Schedulable"), "Automatic", "healthy", None),
    ("Pending", None, "Automatic", "in_progress", None),
    ("Running", None, "Automatic", "in_progress", None),
    ("Running", kube(node_health_status="UnschedulablePendingReplacement"), "None",
     "unhealthy", "replace"),
    ("Running", kube(deep_health_check_status="Failed"), "None", "unhealthy", "replace"),
    ("Running", kube(ready=False), "None", "unhealthy", "reboot"),
    ("Failure", kube(ready=False), "Automatic", "unhealthy", "reboot"),
])
def test_state_and_suggested_step(status: str, node: dict[str, Any] | None, recovery: str,
                                  state: str, action: str | None) -> None:
    h = health(summary(status), node, recovery)
    assert (h["state"], h["suggested_action"]) == (state, action)
    if action:
        assert [s["action"] for s in h["escalation"]] == ["investigate", "reboot", "replace"]
        assert [s["action"] for s in h["escalation"] if s["suggested"]] == [action]


def test_manual_recovery_says_investigate_first_and_automatic_says_wait() -> None:
    manual = health(summary(), kube(node_health_status="UnschedulablePendingReboot"), "None")
    auto = health(summary(), kube(node_health_status="UnschedulablePendingReboot"), "Automatic")
    assert manual["note"] == "Investigate first, then reboot."
    assert "automatically" in auto["note"]


def test_fault_labels_are_read_in_both_spellings() -> None:
    h = health(summary(), kube(fault_types="NvidiaErrorReboot", fault_reasons="Xid79"), None)
    assert (h["fault_type"], h["fault_reason"]) == ("NvidiaErrorReboot", "Xid79")


def test_unreachable_kubernetes_is_unknown_not_healthy() -> None:
    h = health(summary(), None, "Automatic", kube_reachable=False)
    assert h["state"] == "unknown" and "Kubernetes" in h["note"]


def test_gpu_allocation_counts_requests_of_live_pods() -> None:
    def pod(gpus: int, phase: str = "Running", key: str = "requests") -> dict[str, Any]:
        return {"spec": {"containers": [{"resources": {key: {"nvidia.com/gpu": str(gpus)}}}]},
                "status": {"phase": phase}}

    pods = [pod(2), pod(4, key="limits"), pod(8, "Succeeded")]
    assert gpu_allocation(kube(), pods) == {"capacity": 8, "allocatable": 8, "allocated": 6}
