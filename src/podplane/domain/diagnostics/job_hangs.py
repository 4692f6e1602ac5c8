"""Hangs (pure): a running job whose pods all went silent (services/jobs/stall.py), and a
restart or failure the HyperPod training operator made because a log-monitoring rule found
the job HANGING or SLOW.

Sources: ../shared/crds/hyperpod-training/FIELDS.md (`spec.runPolicy.
logMonitoringConfiguration[]`: name, logPattern, expectedStartCutOffInSeconds,
expectedRecurringFrequencyInSeconds, metricThreshold; "rules for SLOW / HANGING job
detection"; `status.restartCount`, `latestFaultyPodInstanceList`); AWS docs "Using the
training operator to run jobs" (the rules detect problems and recover the job). The sources
do not give the operator's event text: a restart or failure event is read as a rule's when
it names one of the job's rules and says HANGING or SLOW.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.diagnostics.verdict import Evidence, Finding, Status
from podplane.domain.jobs import views

Shape = dict[str, Any]
STATES = ("HANGING", "SLOW")


def rules(job: Shape) -> list[Shape]:
    return list(((job.get("spec") or {}).get("runPolicy") or {})
                .get("logMonitoringConfiguration") or [])


def _rule_text(rule: Shape) -> str:
    parts = [f"pattern {rule.get('logPattern')!r}"]
    if rule.get("expectedStartCutOffInSeconds") is not None:
        parts.append(f"first match within {rule['expectedStartCutOffInSeconds']} s")
    if rule.get("expectedRecurringFrequencyInSeconds") is not None:
        parts.append(f"then every {rule['expectedRecurringFrequencyInSeconds']} s")
    if rule.get("metricThreshold") is not None:
        parts.append(f"SLOW when the metric {rule.get('operator')} {rule['metricThreshold']}")
    return f"rule {rule.get('name')}: " + ", ".join(parts)


def rule_fired(job: Shape, events: list[Shape], pods: list[Shape]) -> Finding | None:
    """The operator's restarts and failure that a log-monitoring rule caused."""
    named = {str(r.get("name")): r for r in rules(job)}
    kind = job.get("kind")
    fired = [e for e in events if e.get("type") == "Warning"
             and (e.get("involvedObject") or {}).get("kind") == kind
             and any(s in str(e.get("message")) for s in STATES)
             and any(name in str(e.get("message")) for name in named)]
    if not fired:
        return None
    spent = views.budget(job, pods)
    failed = views.status_of(job) == "Failed"
    latest = fired[-1]
    rule = next(r for n, r in named.items() if n in str(latest.get("message")))
    state = next(s for s in STATES if s in str(latest.get("message")))
    proof = [Evidence(f"kubernetes:{kind} status", f"restarts {spent['spent']} of "
                      f"{spent['budget']} spent"),
             Evidence(f"kubernetes:{kind} spec", _rule_text(rule))]
    proof += [Evidence("kubernetes:Event", f"{e.get('reason')} at {_when(e)}: "
                       f"{e.get('message')}") for e in fired[-3:]]
    what = f"the training operator's log-monitoring rule {rule.get('name')} found the job " \
        f"{state} at {_when(latest)}"
    if failed:
        return Finding("hang_rule", Status.FAIL, f"{what}, and its restart budget was spent "
                       f"({spent['spent']} of {spent['budget']}): the job failed.",
                       "Find where the workers stopped (job_logs); resubmit with a larger "
                       "max_restarts once the cause is fixed.", tuple(proof))
    return Finding("hang_rule", Status.WARN, f"{what} and restarted it ({spent['spent']} of "
                   f"{spent['budget']} restarts spent).", "Watch the job; the operator "
                   "fails it once the budget is spent.", tuple(proof))


def stalled(job: Shape, stall: Shape | None, pods: list[Shape]) -> Finding | None:
    """Every running pod silent for the stall window (services/jobs/stall.py)."""
    if stall is None or views.status_of(job) != "Running":
        return None
    running = sorted(p["metadata"]["name"] for p in pods
                     if (p.get("status") or {}).get("phase") == "Running")
    nodes = sorted({str((p.get("spec") or {}).get("nodeName")) for p in pods
                    if (p.get("status") or {}).get("phase") == "Running"})
    spent = views.budget(job, pods)
    proof = [Evidence("kubernetes:Pod logs", f"pods {', '.join(running)} (nodes "
                      f"{', '.join(nodes)}) wrote nothing in the last {stall['since_seconds']} "
                      f"s; the newest line is from {stall['pod']} at {stall['last_line_at']}"),
             Evidence(f"kubernetes:{job.get('kind')} status", f"restarts {spent['spent']} of "
                      f"{spent['budget']} spent")]
    hang = [r for r in rules(job) if r.get("expectedRecurringFrequencyInSeconds") is not None]
    proof += [Evidence(f"kubernetes:{job.get('kind')} spec", _rule_text(r)) for r in hang]
    later = (" The operator's hang rule will restart it." if hang and spent["remaining"] else
             " The operator's hang rule will fail it: no restart is left." if hang else
             " No log-monitoring rule will restart it.")
    return Finding("stalled", Status.FAIL, f"every running pod has been silent since "
                   f"{stall['last_line_at']} (a hung collective keeps workers alive and "
                   f"silent).{later}", "Cancel the job to free its GPUs (job_cancel), then "
                   "test the nodes' links (diagnose_nccl) and resubmit from the last "
                   "checkpoint.", tuple(proof))


def _when(event: Shape) -> str:
    return str(event.get("lastTimestamp") or event.get("eventTime")
               or event.get("firstTimestamp") or "?")
