"""Pre-flight checks: pure functions over facts the service gathers before creating anything."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from podplane.domain.errors import PodplaneError


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Literal["blocking", "warning"]
    message: str
    hint: str | None = None


@dataclass(frozen=True)
class CapacityFacts:
    instance_type: str
    availability_zone: str
    count: int
    offered_azs: list[str]              # AZs that offer the type
    quota_limit: int | None             # SageMaker cluster-usage quota for the type
    quota_used: int = 0
    plan_az: str | None = None          # the training plan's AZ, when one is used
    plan_instance_count: int | None = None
    quota_is_default: bool = False      # no applied value: AWS's default quota applies


@dataclass
class PreflightReport:
    findings: list[Finding] = field(default_factory=list)
    adopted_az: str | None = None

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "blocking"]

    def warnings_not_overridden(self, overridden: set[str]) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning" and f.code not in overridden]


def check_capacity(facts: CapacityFacts) -> PreflightReport:
    report = PreflightReport()
    az = facts.availability_zone
    if facts.plan_az and facts.plan_az != az:
        report.adopted_az = facts.plan_az
        report.findings.append(Finding(
            "training_plan_az_adopted", "warning",
            f"The training plan reserves capacity in {facts.plan_az}; using it instead of {az}.",
            "Training-plan capacity exists only in the plan's availability zone.",
        ))
        az = facts.plan_az
    if az not in facts.offered_azs:  # EC2's offerings only hint at HyperPod's ml.* capacity
        offered = ", ".join(sorted(facts.offered_azs)) or "none in this region"
        report.findings.append(Finding(
            "type_not_offered", "warning",
            f"EC2 does not list {facts.instance_type.removeprefix('ml.')} as offered in {az}; "
            "HyperPod may not have it there either.",
            f"AZs where EC2 offers it: {offered}. Override this warning to try anyway.",
        ))
    _check_quota(facts, report)
    if facts.plan_instance_count is not None and facts.count > facts.plan_instance_count:
        report.findings.append(Finding(
            "training_plan_too_small", "blocking",
            f"The training plan covers {facts.plan_instance_count} instances; "
            f"{facts.count} were requested.",
            "Request at most the plan's instance count or use another plan.",
        ))
    return report


def _check_quota(facts: CapacityFacts, report: PreflightReport) -> None:
    if facts.quota_limit is None:
        return
    left = facts.quota_limit - facts.quota_used
    if facts.count > left:
        report.findings.append(Finding(
            "quota_exceeded", "blocking",
            f"The SageMaker quota '{facts.instance_type} for cluster usage' allows {left} more "
            f"instance(s) (limit {facts.quota_limit}, in use {facts.quota_used}); "
            f"{facts.count} requested.",
            quota_hint(facts.instance_type, facts.quota_is_default),
        ))


def quota_hint(instance_type: str, is_default: bool) -> str:
    ask = (f"Request an increase of '{instance_type} for cluster usage' in Service Quotas "
           "(service: Amazon SageMaker)")
    if is_default:
        return (f"The account has no increase for this quota, so AWS's default applies (0 for "
                f"most GPU types). {ask}; approval can take days.")
    return f"{ask}, or lower the count."


class PreflightBlocked(PodplaneError):
    """Pre-flight found something that must change before anything is created.

    The code is the first finding's (quota_exceeded, type_not_offered, ...); every finding
    travels in `findings`, so a client can show them all at once.
    """

    status, title = 422, "Pre-flight check failed"

    def __init__(self, findings: list[Finding]) -> None:
        first = findings[0]
        super().__init__(first.message, hint=first.hint,
                         findings=[asdict(f) for f in findings])
        self.code = first.code


def raise_if_blocked(report: PreflightReport, overridden: set[str]) -> None:
    """Blocking findings always stop; warnings stop unless listed in `overridden`."""
    stop = report.blocking + report.warnings_not_overridden(overridden)
    if stop:
        raise PreflightBlocked(stop)
