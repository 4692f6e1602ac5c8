"""The HyperPod training operator's log monitoring: `spec.runPolicy.logMonitoringConfiguration`
rules evaluated over a running job's pod logs on the virtual clock.

Sources: ../shared/crds/hyperpod-training/FIELDS.md (`logMonitoringConfiguration[]`: name,
logPattern with an optional capture group for a numeric metric, expectedStartCutOffInSeconds,
expectedRecurringFrequencyInSeconds, metricThreshold with operator gt|lt|eq|gteq|lteq,
metricEvaluationDataPoints defaulting to 1, stopPattern); AWS docs "Using the training operator
to run jobs" (rules that analyse the job's log output "to detect problems and recover"; its
example: JobStart must match within the cut-off, JobHangingDetection must match again within
the recurring frequency).

What counts as a fault here, per running pod (its first container, from its start):
- HANGING: no line matched within `expectedStartCutOffInSeconds` of the start, or none for
  `expectedRecurringFrequencyInSeconds` since the last match (or the start);
- SLOW: the metric captured by the last `metricEvaluationDataPoints` matches all compare true
  with `metricThreshold`;
- a line matching `stopPattern` turns the rule off from then on.
A HANGING or SLOW rule is a fault like a failed pod: the job restarts within
`jobMaxRetryCount`, then fails (training_faults.restart_or_fail). The sources do not say
whether SLOW restarts or only reports: the sandbox restarts (the stricter reading). The
operator's patterns are Go RE2, matched anywhere in the line; Python's `re.search` agrees on
the patterns AWS shows.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

from podplane_sandbox.kube import logs
from podplane_sandbox.kube.controllers.framework import Ctx

Obj = dict[str, Any]
Fault = tuple[Obj, str | None, str]
COMPARE: dict[str, Callable[[float, float], bool]] = {
    "gt": operator.gt, "lt": operator.lt, "eq": operator.eq, "gteq": operator.ge,
    "lteq": operator.le}


def rules_of(job: Obj) -> list[Obj]:
    return list(((job.get("spec") or {}).get("runPolicy") or {})
                .get("logMonitoringConfiguration") or [])


def log_faults(ctx: Ctx, job: Obj, pods: list[Obj]) -> tuple[list[Fault], float | None]:
    """The pods whose logs break a rule, and in how many seconds a rule could next break."""
    rules, now = rules_of(job), ctx.now()
    faults: list[Fault] = []
    soonest: float | None = None
    for pod in pods if rules else []:
        if (pod.get("status") or {}).get("phase") != "Running":
            continue
        container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
        started = logs.container_start(pod, container.get("name", ""))
        if started is None:
            continue
        lines = logs.lines_between(pod, container, started, now + 1e-6, started)
        for rule in rules:
            why, deadline = evaluate(rule, lines, started, now)
            if why:
                faults.append((pod, (pod.get("spec") or {}).get("nodeName"),
                               f"log monitoring rule {rule.get('name')} on pod "
                               f"{pod['metadata']['name']}: {why}"))
                break
            if deadline is not None:
                soonest = deadline if soonest is None else min(soonest, deadline)
    return faults, None if soonest is None else max(soonest - now, 0.5)


def evaluate(rule: Obj, lines: list[tuple[float, str]], started: float,
             now: float) -> tuple[str | None, float | None]:
    """(why the rule is HANGING or SLOW, or None; when it could next break, or None)."""
    pattern = re.compile(rule["logPattern"])
    stop = re.compile(rule["stopPattern"]) if rule.get("stopPattern") else None
    matches: list[tuple[float, re.Match[str]]] = []
    for t, line in lines:
        if stop is not None and stop.search(line):
            return None, None  # the rule is off from this line on
        if (m := pattern.search(line)) is not None:
            matches.append((t, m))
    cutoff = rule.get("expectedStartCutOffInSeconds")
    if cutoff is not None and not any(t <= started + cutoff for t, _ in matches):
        if now >= started + cutoff:
            return f"HANGING: no log line matched within {cutoff} s of the start", None
        return None, started + cutoff
    every = rule.get("expectedRecurringFrequencyInSeconds")
    if every is not None:
        last = matches[-1][0] if matches else started
        if now - last > every:
            return f"HANGING: no log line matched for {now - last:.0f} s (expected every " \
                   f"{every} s)", None
        slow = _slow(rule, matches)
        return slow, None if slow else _next(rule, now, last + every + 1)
    slow = _slow(rule, matches)
    return slow, None if slow else _next(rule, now, None)


def _next(rule: Obj, now: float, deadline: float | None) -> float | None:
    """A metric can cross its threshold with any new line: look again at the next one."""
    if rule.get("metricThreshold") is None:
        return deadline
    return min(deadline, now + logs.TRAIN_EVERY) if deadline is not None \
        else now + logs.TRAIN_EVERY


def _slow(rule: Obj, matches: list[tuple[float, re.Match[str]]]) -> str | None:
    threshold, op = rule.get("metricThreshold"), rule.get("operator")
    points = int(rule.get("metricEvaluationDataPoints") or 1)
    if threshold is None or op not in COMPARE or len(matches) < points:
        return None
    values = []
    for _, m in matches[-points:]:
        try:
            values.append(float(m.group(1)))
        except (IndexError, ValueError):
            return None  # no capture group, or not a number: nothing to compare
    if all(COMPARE[op](v, float(threshold)) for v in values):
        return f"SLOW: metric {values[-1]:g} {op} {threshold} for {points} data point(s)"
    return None
