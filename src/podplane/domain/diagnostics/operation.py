"""Why an operation failed, or what it waits on: the failing step, its classified error (the
engine stored code, message and hint), the AWS-side cause when the code names one, and the
exact retry (pure).

Causes come from our classification of AWS errors (domain/cloud_errors.py, which cites the
AWS error-code pages). The IAM action is read from AWS's access-denied message, "User: <arn>
is not authorized to perform: <service>:<Action> ..." (IAM User Guide, "Troubleshoot access
denied error messages"). A cluster's operation also shows HyperPod's warning and error
events and, when an add-on step failed, the add-ons' health issues (cloud_evidence.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from podplane.domain.diagnostics.cloud_evidence import (
    addon_evidence,
    alarming,
    event_evidence,
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
STEP = "operation step"
PERMISSIONS_DOC = "docs/aws-permissions.md"
DENIED_ACTION = re.compile(r"not authorized to perform: ([A-Za-z0-9-]+:[A-Za-z0-9*]+)")
# code -> (the cause in words, what fixes it before the retry)
CAUSES: dict[str, tuple[str, str]] = {
    "insufficient_capacity": ("AWS has no capacity for the instance type",
                              "wait, or choose another Availability Zone, instance type or "
                              "a training plan"),
    "quota_exceeded": ("an account quota is exhausted",
                       "request a Service Quotas increase or ask for fewer instances"),
    "access_denied": ("podplane's IAM identity was denied an AWS action",
                      f"grant the action (the policy of {PERMISSIONS_DOC})"),
    "iam_role_not_ready": ("an IAM role could not be assumed yet",
                           "check that the role exists and trusts the service; IAM changes "
                           "take a minute to propagate"),
    "throttled": ("AWS rate-limited the calls", "nothing: retry"),
    "cloud_unavailable": ("AWS had an internal error", "nothing: retry"),
    "kube_unreachable": ("the cluster's Kubernetes API did not answer",
                         "check the endpoint and podplane's access entry "
                         "(podplane doctor --cluster)"),
    "addon_failed": ("an EKS add-on failed", "repair what its health issues name (the "
                     "eks:DescribeAddon evidence); retrying recreates a failed add-on"),
    "addon_timeout": ("an EKS add-on did not become ACTIVE in time",
                      "repair what its health issues name (InsufficientNumberOfReplicas: "
                      "its pods have no Ready node)"),
    "nodes_not_ready": ("no node became Ready", "check the HyperPod instances (node_list)"),
}


@dataclass(frozen=True)
class OperationFacts:
    """The operation as the engine shows it (ops/views.Operation, as JSON); `destroys`: its
    kind destroys, so retrying it through MCP needs confirm=true."""

    op_id: str
    kind: str
    target: str
    status: str
    steps: tuple[Shape, ...]
    destroys: bool = False
    cancel_requested: bool = False
    # Read from the cloud when the operation is about a cluster: HyperPod's events (newest
    # first) and the EKS add-ons of a failed add-on step (DescribeAddon shapes).
    cluster_events: tuple[Shape, ...] = ()
    addons: tuple[Shape, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be read


def diagnose(f: OperationFacts) -> Verdict:
    target = f"operation/{f.op_id}"
    if f.status == "succeeded":
        return healthy(target, f"{f.kind} on {f.target} succeeded.")
    if f.status in ("pending", "running"):
        return _in_flight(f, target)
    step = next((s for s in f.steps if s.get("status") in ("failed", "cancelled")), None) or \
        next((s for s in f.steps if s.get("status") != "succeeded"), None)
    if step is None:  # every step done yet the operation is not: say so rather than guess
        return Verdict(target, f"The operation is {f.status} with every step succeeded.",
                       (Finding("operation", Status.WARN, f"Status {f.status}.", ""),))
    retry = _retry(f, step["name"])
    if f.status == "cancelled":
        return Verdict(target, f"Cancelled at step {step['name']!r}.", (Finding(
            "cancelled", Status.WARN, f"The operation was cancelled before step "
            f"{step['name']!r} finished.", "Retry the step to go on, or clean up.",
            (_step_evidence(step),)),), retry)
    return _failed(f, target, step, retry)


def _failed(f: OperationFacts, target: str, step: Shape, retry: SuggestedCall) -> Verdict:
    error = step.get("error") or {}
    code = str(error.get("code") or "unknown")
    message = str(error.get("message") or "")
    cause, fix = CAUSES.get(code, ("", ""))
    denied = DENIED_ACTION.search(message)
    if code == "access_denied" and denied:
        cause = f"podplane's IAM identity may not call {denied.group(1)}"
        fix = f"allow {denied.group(1)} (the policy of {PERMISSIONS_DOC})"
    hint = str(error.get("hint") or "")
    what = cause or f"the step failed with {code}"
    fix_text = "; ".join(x for x in (fix and fix[0].upper() + fix[1:], hint) if x)
    proof = (_step_evidence(step), *addon_evidence(f.addons),
             *event_evidence(alarming(f.cluster_events)))
    finding = Finding(code, Status.FAIL, f"Step {step['name']!r} failed: {what}.",
                      f"{fix_text or 'Fix the cause in the message'}; then retry the step.",
                      proof)
    return Verdict(target, f"Step {step['name']!r} of {f.kind} failed: {what}.", (finding,),
                   retry, notes=f.notes)


def _in_flight(f: OperationFacts, target: str) -> Verdict:
    step = next((s for s in f.steps if s.get("status") == "running"), None)
    wait = SuggestedCall("operation_wait", {"operation_id": f.op_id}, "None: waits up to "
                         "50 s for a change.", mutates=False)
    if step is None:
        return Verdict(target, f"The operation is {f.status}; no step has started yet.",
                       (Finding("waiting", Status.WARN, "No step is running.",
                                "Wait; a server restart resumes it."),), wait)
    errors = [e for e in step.get("history") or [] if e.get("error")]
    since = step.get("started_at")
    seen = event_evidence(alarming(f.cluster_events))  # e.g. no capacity for a group
    if not errors:
        note = f"Step {step['name']!r} is running (phase {step.get('phase')}) since {since}."
        return Verdict(target, note, (Finding("running", Status.WARN, note, "Wait.", seen),),
                       wait, since=_text(since), notes=f.notes)
    last = errors[-1]["error"]
    cause = CAUSES.get(str(last.get("code")), (str(last.get("code")), ""))[0]
    proof = tuple(Evidence(STEP, f"{step['name']} attempt {e.get('attempt')}: "
                           f"{e['error'].get('code')}: {e['error'].get('message')}")
                  for e in errors[-3:]) + seen
    return Verdict(target, f"Step {step['name']!r} is retrying: {cause}.",
                   (Finding(str(last.get("code")), Status.WARN, f"Step {step['name']!r} "
                            f"met {last.get('code')} and backs off.",
                            str(last.get("hint") or "Wait."), proof),), wait,
                   since=_text(since), notes=f.notes)


def _retry(f: OperationFacts, step: str) -> SuggestedCall:
    args: dict[str, Any] = {"operation_id": f.op_id, "step": step}
    if f.destroys:
        args["confirm"] = True
    return SuggestedCall("operation_retry_step", args, f"Runs step {step!r} again, then the "
                         "steps after it; completed steps are not repeated."
                         + (" It destroys: confirm with the user." if f.destroys else ""),
                         mutates=True)


def _step_evidence(step: Shape) -> Evidence:
    error = step.get("error") or {}
    said = f": {error.get('code')}: {error.get('message')}" if error else ""
    return Evidence(STEP, f"{step['name']} {step.get('status')} at attempt "
                    f"{step.get('attempt')}{said}")


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
