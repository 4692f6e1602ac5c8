"""Evidence read from the cloud's own records, shared by the node and operation diagnoses
(pure): HyperPod's cluster events and EKS add-ons' health issues.

Sources: botocore's sagemaker model, ClusterEventSummary (EventLevel Info | Warn | Error,
ResourceType Cluster | InstanceGroup | Instance, Description, EventTime; ListClusterEvents is
"only supported when the NodeProvisioningMode is set to Continuous"); botocore's eks model,
Addon.status (CREATING | ACTIVE | CREATE_FAILED | UPDATING | DELETING | DELETE_FAILED |
DEGRADED | UPDATE_FAILED) and Addon.health.issues (AddonIssue: code, message, resourceIds).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from podplane.domain.diagnostics.verdict import Evidence, Finding, Status

Shape = dict[str, Any]
EVENTS, ADDON = "hyperpod:ListClusterEvents", "eks:DescribeAddon"
ALARMING = ("Warn", "Error")
MAX_EVENTS = 5


def event_evidence(events: tuple[Shape, ...] | list[Shape]) -> tuple[Evidence, ...]:
    """The newest events first, as HyperPod recorded them."""
    return tuple(Evidence(EVENTS, f"{e.get('EventLevel', '?')} {_when(e.get('EventTime'))} "
                          f"{_about(e)}: {e.get('Description', '')}")
                 for e in list(events)[:MAX_EVENTS])


def alarming(events: tuple[Shape, ...] | list[Shape]) -> list[Shape]:
    return [e for e in events if e.get("EventLevel") in ALARMING]


def unresolved(events: tuple[Shape, ...] | list[Shape]) -> bool:
    """The newest event is a warning or an error: nothing HyperPod did since answered it."""
    return bool(events) and events[0].get("EventLevel") in ALARMING


def addon_evidence(addons: tuple[Shape, ...] | list[Shape]) -> tuple[Evidence, ...]:
    """Each add-on that is not ACTIVE or reports health issues, with every issue."""
    out: list[Evidence] = []
    for a in addons:
        issues = (a.get("health") or {}).get("issues") or []
        if a.get("status") == "ACTIVE" and not issues:
            continue
        said = "; ".join(f"{i.get('code')}: {i.get('message')}"
                         + (f" ({', '.join(i['resourceIds'])})" if i.get("resourceIds") else "")
                         for i in issues) or "no health issue reported"
        out.append(Evidence(ADDON, f"{a.get('addonName')} {a.get('status')}: {said}"))
    return tuple(out)


def with_evidence(findings: list[Finding], more: tuple[Evidence, ...]) -> list[Finding]:
    """`more` added to the first finding that is not OK (the cause it supports)."""
    at = next((i for i, f in enumerate(findings) if f.status is not Status.OK), None)
    if at is None or not more:
        return findings
    out = list(findings)
    out[at] = replace(out[at], evidence=out[at].evidence + more)
    return out


def _about(e: Shape) -> str:
    kind = e.get("ResourceType", "Cluster")
    name = e.get("InstanceId") or e.get("InstanceGroupName") or e.get("ClusterName", "")
    return f"{kind} {name}".strip()


def _when(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)
