"""Every UpdateCluster carries only allowlisted fields for every remaining group."""

from __future__ import annotations

from podplane.domain.hyperpod_failures import group_failure as failure_of
from podplane.domain.instance_groups import UPDATE_ALLOWLIST
from podplane.services.groups.steps import update_params
from podplane.services.scope import ClusterRef

REF = ClusterRef("gpu", "gpu-hp", "gpu")
DESCRIBED = {"ClusterName": "gpu-hp", "ClusterStatus": "InService", "InstanceGroups": [
    {"InstanceGroupName": "a", "InstanceType": "ml.g5.8xlarge", "TargetCount": 2,
     "CurrentCount": 2, "Status": "InService", "ThreadsPerCore": 1, "MinCount": 0,
     "KubernetesConfig": {"CurrentLabels": {"team": "a"}, "DesiredLabels": {"team": "a"},
                          "CurrentTaints": [], "DesiredTaints": []},
     "LifeCycleConfig": {"SourceS3Uri": "s3://b/", "OnCreate": "on_create.sh"},
     "ExecutionRole": "arn:aws:iam::1:role/r", "CurrentImageId": "ami-1",
     "InstanceTypeDetails": [{"InstanceType": "ml.g5.8xlarge", "CurrentCount": 2}],
     "CapacityRequirements": {"Spot": {}}, "NetworkInterface": {"InterfaceType": "efa-only"}},
    {"InstanceGroupName": "b", "InstanceType": "ml.m5.xlarge", "TargetCount": 1,
     "CurrentCount": 1, "Status": "InService"},
    {"InstanceGroupName": "c", "InstanceType": "ml.m5.xlarge", "TargetCount": 0,
     "CurrentCount": 1, "Status": "Deleting"},
]}


def test_scale_resubmits_the_others_unchanged_with_allowlisted_fields_only() -> None:
    params = update_params(DESCRIBED, REF, changes={"b": {"InstanceCount": 5}})
    assert params["ClusterName"] == "gpu-hp" and "InstanceGroupsToDelete" not in params
    a, b = params["InstanceGroups"]  # the group being deleted is not resubmitted
    assert set(a) <= set(UPDATE_ALLOWLIST) and set(b) <= set(UPDATE_ALLOWLIST)
    assert a == {"InstanceGroupName": "a", "InstanceType": "ml.g5.8xlarge", "InstanceCount": 2,
                 "ThreadsPerCore": 1, "MinInstanceCount": 0,
                 "KubernetesConfig": {"Labels": {"team": "a"}},
                 "LifeCycleConfig": {"SourceS3Uri": "s3://b/", "OnCreate": "on_create.sh"},
                 "ExecutionRole": "arn:aws:iam::1:role/r", "CapacityRequirements": {"Spot": {}},
                 "NetworkInterface": {"InterfaceType": "efa-only"}}
    assert b == {"InstanceGroupName": "b", "InstanceType": "ml.m5.xlarge", "InstanceCount": 5}


def test_add_and_delete() -> None:
    new = {"InstanceGroupName": "d", "InstanceType": "ml.m5.xlarge", "InstanceCount": 1}
    added = update_params(DESCRIBED, REF, add=[new])
    assert [g["InstanceGroupName"] for g in added["InstanceGroups"]] == ["a", "b", "d"]
    deleted = update_params(DESCRIBED, REF, delete=["b"])
    assert deleted["InstanceGroupsToDelete"] == ["b"]
    assert [g["InstanceGroupName"] for g in deleted["InstanceGroups"]] == ["a"]


def test_a_degraded_group_is_a_classified_failure() -> None:
    capacity = failure_of({"FailureMessage": "We currently do not have sufficient capacity for "
                           "the requested instance type(s). Please try again."},
                          {"Status": "Degraded"})
    other = failure_of({"FailureMessage": "Lifecycle scripts failed"}, {"Status": "Failed"})
    assert capacity is not None and capacity.code == "insufficient_capacity"
    assert capacity.extra["available_azs"] == []  # HyperPod names no AZ: a neutral hint
    assert capacity.hint is not None and "retry later" in capacity.hint.lower()
    assert other is not None and other.code == "instance_group_failed"
    assert failure_of({}, {"Status": "InService"}) is None
