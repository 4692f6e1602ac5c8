"""Pre-flight findings from capacity facts."""

from __future__ import annotations

from podplane.domain.preflight import CapacityFacts, check_capacity

BASE = dict(instance_type="ml.p5.48xlarge", availability_zone="us-west-2a", count=4,
            offered_azs=["us-west-2a", "us-west-2b"], quota_limit=8, quota_used=0)


def codes(**over: object) -> list[str]:
    facts = CapacityFacts(**{**BASE, **over})  # type: ignore[arg-type]
    return [f.code for f in check_capacity(facts).findings]


def test_all_good_has_no_findings() -> None:
    assert codes() == []


def test_quota_shortfall_blocks_and_names_the_quota() -> None:
    facts = CapacityFacts(**{**BASE, "quota_used": 6})  # type: ignore[arg-type]
    report = check_capacity(facts)
    assert [f.code for f in report.blocking] == ["quota_exceeded"]
    assert "ml.p5.48xlarge for cluster usage" in report.blocking[0].message
    assert "2 more" in report.blocking[0].message


def test_type_not_offered_is_a_warning_naming_the_azs_that_offer_it() -> None:
    """EC2 offerings are only a proxy for HyperPod's ml.* capacity: warn, do not block."""
    report = check_capacity(CapacityFacts(**{**BASE, "availability_zone": "us-west-2c"}))  # type: ignore[arg-type]
    assert report.blocking == []
    warning = report.warnings_not_overridden(set())[0]
    assert warning.code == "type_not_offered"
    assert "us-west-2a, us-west-2b" in (warning.hint or "")
    assert report.warnings_not_overridden({"type_not_offered"}) == []


def test_a_default_quota_blocks_with_a_hint_to_request_an_increase() -> None:
    facts = CapacityFacts(**{**BASE, "quota_limit": 0, "quota_is_default": True})  # type: ignore[arg-type]
    finding = check_capacity(facts).blocking[0]
    assert finding.code == "quota_exceeded"
    assert "AWS's default applies" in (finding.hint or "")
    assert "Request an increase" in (finding.hint or "")


def test_training_plan_az_is_adopted_and_told() -> None:
    facts = CapacityFacts(**{**BASE, "plan_az": "us-west-2b", "plan_instance_count": 4})  # type: ignore[arg-type]
    report = check_capacity(facts)
    assert report.adopted_az == "us-west-2b"
    assert [f.code for f in report.findings] == ["training_plan_az_adopted"]
    assert report.warnings_not_overridden({"training_plan_az_adopted"}) == []
