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


def test_type_not_offered_names_the_azs_that_offer_it() -> None:
    report = check_capacity(CapacityFacts(**{**BASE, "availability_zone": "us-west-2c"}))  # type: ignore[arg-type]
    assert report.blocking[0].code == "type_not_offered"
    assert "us-west-2a, us-west-2b" in (report.blocking[0].hint or "")


def test_training_plan_az_is_adopted_and_told() -> None:
    facts = CapacityFacts(**{**BASE, "plan_az": "us-west-2b", "plan_instance_count": 4})  # type: ignore[arg-type]
    report = check_capacity(facts)
    assert report.adopted_az == "us-west-2b"
    assert [f.code for f in report.findings] == ["training_plan_az_adopted"]
    assert report.warnings_not_overridden({"training_plan_az_adopted"}) == []
