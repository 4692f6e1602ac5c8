"""ClusterSpec validation and the derived plan."""

from __future__ import annotations

import pytest

from podplane.domain.clusters import ClusterSpec, plan_cluster
from podplane.domain.errors import InvalidInput
from podplane.domain.instance_groups import CapacityType

AZS = ["us-west-2a", "us-west-2b", "us-west-2c"]


def spec(**over: object) -> ClusterSpec:
    base: dict[str, object] = dict(name="train-1", region="us-west-2",
                                   availability_zone="us-west-2b",
                                   instance_type="ml.p5.48xlarge", count=2)
    return ClusterSpec(**{**base, **over})  # type: ignore[arg-type]


def test_plan_defaults_are_resilient() -> None:
    plan = plan_cluster(spec(), AZS, "123456789012").describe()
    assert plan["node_recovery"] == "Automatic"
    assert plan["instance_group"]["deep_health_checks"] == ["InstanceStress",
                                                            "InstanceConnectivity"]
    assert plan["instance_group"]["threads_per_core"] == 2
    assert plan["network"]["compute"][0] == "us-west-2b"
    assert plan["steps"][0] == "preflight" and plan["steps"][-1] == "verify"
    assert plan["notes"] == []


@pytest.mark.parametrize(("instance_type", "checks"), [
    ("ml.m5.xlarge", []),                     # CPU: HyperPod has no deep health checks
    ("ml.g5.xlarge", ["InstanceStress"]),     # GPU without EFA: no connectivity check
    ("ml.trn1.32xlarge", ["InstanceStress", "InstanceConnectivity"]),
])
def test_the_first_group_gets_only_the_checks_its_type_supports(
    instance_type: str, checks: list[str],
) -> None:
    plan = plan_cluster(spec(instance_type=instance_type), AZS, "123456789012").describe()
    assert plan["instance_group"]["deep_health_checks"] == checks


def test_turning_deep_health_checks_off_is_explained() -> None:
    plan = plan_cluster(spec(deep_health_checks=False), AZS, "123456789012").describe()
    assert plan["instance_group"]["deep_health_checks"] == []
    assert "deep health checks are off" in plan["notes"][0]


def test_training_plan_needs_its_arn() -> None:
    with pytest.raises(InvalidInput) as err:
        plan_cluster(spec(capacity_type=CapacityType.TRAINING_PLAN), AZS, "1")
    assert err.value.extra["field"] == "training_plan_arn"


def test_non_sagemaker_type_is_refused() -> None:
    with pytest.raises(InvalidInput):
        plan_cluster(spec(instance_type="p5.48xlarge"), AZS, "1")


def test_bucket_name_fits_s3_rules() -> None:
    plan = plan_cluster(spec(name="x" * 63), AZS, "123456789012")
    assert len(plan.bucket) <= 63 and not plan.bucket.endswith("-")
