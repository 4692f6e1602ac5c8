"""Immutable fields, EFA-only, allowlist and names."""

from __future__ import annotations

import pytest

from podplane.domain.errors import Conflict, InvalidInput
from podplane.domain.instance_groups import (
    UPDATE_ALLOWLIST,
    CapacityType,
    GroupShape,
    check_efa_only,
    check_immutable,
    deep_health_checks_for,
    for_update,
    shape_of,
    threads_per_core,
)
from podplane.domain.names import check_cluster_name, check_group_name

EFA = {"ml.p5.48xlarge": 32, "ml.g5.12xlarge": 1, "ml.p4d.24xlarge": 4}


def test_shape_is_read_from_describe_cluster() -> None:
    spot = {"InstanceGroupName": "w", "CapacityRequirements": {"Spot": {}}}
    plan = {"TrainingPlanArn": "arn:aws:sagemaker:us-west-2:1:training-plan/x",
            "NetworkInterface": {"InterfaceType": "efa-only"}}
    assert shape_of(spot) == GroupShape(CapacityType.SPOT, False)
    assert shape_of(plan) == GroupShape(CapacityType.TRAINING_PLAN, True)
    assert shape_of({}) == GroupShape(CapacityType.ON_DEMAND, False)


def test_capacity_type_change_names_the_field() -> None:
    with pytest.raises(Conflict) as err:
        check_immutable(GroupShape(CapacityType.SPOT, False),
                        GroupShape(CapacityType.ON_DEMAND, False))
    assert err.value.extra["field"] == "capacity_type"


def test_efa_mode_change_names_the_field() -> None:
    with pytest.raises(Conflict) as err:
        check_immutable(GroupShape(CapacityType.SPOT, False), GroupShape(CapacityType.SPOT, True))
    assert err.value.extra["field"] == "efa_only"


def test_efa_only_lists_allowed_types() -> None:
    check_efa_only("ml.p5.48xlarge", True, EFA)
    with pytest.raises(InvalidInput) as err:
        check_efa_only("ml.g5.12xlarge", True, EFA)
    assert err.value.extra["allowed"] == ["ml.p4d.24xlarge", "ml.p5.48xlarge"]


def test_update_keeps_only_allowlisted_fields() -> None:
    described = {"InstanceGroupName": "w", "InstanceType": "ml.g5.8xlarge", "TargetCount": 2,
                 "CurrentCount": 2, "Status": "InService", "CurrentImageId": "img-1",
                 "ThreadsPerCore": 1}
    group = for_update(described, InstanceCount=4)
    assert set(group) <= set(UPDATE_ALLOWLIST)
    assert group["InstanceCount"] == 4
    assert "ImageId" not in group  # resubmitting it would pin today's AMI
    assert "Status" not in group and "CurrentCount" not in group
    assert for_update(described, ImageId="ami-0123456789abcdef0")["ImageId"] == \
        "ami-0123456789abcdef0"  # only when the caller chose one


def test_update_keeps_labels_taints_and_min_count_under_their_request_names() -> None:
    taint = {"Key": "gpu", "Value": "yes", "Effect": "NoSchedule"}
    described = {"InstanceGroupName": "w", "InstanceType": "ml.g5.8xlarge", "TargetCount": 2,
                 "MinCount": 1, "KubernetesConfig": {
                     "CurrentLabels": {"team": "a"}, "DesiredLabels": {"team": "b"},
                     "CurrentTaints": [taint], "DesiredTaints": [taint]}}
    group = for_update(described)
    assert group["MinInstanceCount"] == 1
    assert group["KubernetesConfig"] == {"Labels": {"team": "b"}, "Taints": [taint]}
    assert set(group) <= set(UPDATE_ALLOWLIST)


def test_deep_health_checks_only_where_hyperpod_defines_them() -> None:
    assert deep_health_checks_for("ml.m5.xlarge") == ()
    assert deep_health_checks_for("ml.g5.xlarge") == ("InstanceStress",)  # no EFA
    assert deep_health_checks_for("ml.g5.12xlarge") == ("InstanceStress", "InstanceConnectivity")
    assert deep_health_checks_for("ml.p5.48xlarge") == ("InstanceStress", "InstanceConnectivity")


def test_threads_per_core() -> None:
    assert threads_per_core("ml.p5.48xlarge", CapacityType.ON_DEMAND) == 2
    assert threads_per_core("ml.g5.8xlarge", CapacityType.ON_DEMAND) == 1
    assert threads_per_core("ml.g5.8xlarge", CapacityType.TRAINING_PLAN) == 2
    assert threads_per_core("ml.p6e-gb200.36xlarge", CapacityType.ON_DEMAND) == 1  # Grace: no SMT
    assert threads_per_core("ml.p6e-gb200.36xlarge", CapacityType.TRAINING_PLAN) == 1


@pytest.mark.parametrize("name", ["a", "gpu-1", "x" * 63])
def test_good_names(name: str) -> None:
    check_cluster_name(name)
    check_group_name(name)


@pytest.mark.parametrize("name", ["", "-a", "a-", "A_b", "x" * 64, "ab cd", "a..b"])
def test_bad_names(name: str) -> None:
    with pytest.raises(InvalidInput):
        check_cluster_name(name)
