"""What a new group sends to AWS, and the checks made before: pure, plus deep health checks
following the cluster's first group in a real plan."""

from __future__ import annotations

import pytest

from podplane.domain.errors import InvalidInput
from podplane.domain.instance_groups import CapacityType, NewGroup, efa_capable_types, group_spec
from tests.groups.conftest import FIRST_GROUP, FIRST_TYPE, LIFECYCLE, ROLE, Cluster

TEMPLATE = {"LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE}


def test_spot_efa_only_group_spec_carries_exactly_the_decisions() -> None:
    group = NewGroup("train", "ml.p5.48xlarge", 4, capacity_type=CapacityType.SPOT,
                     efa_only=True, ebs_gb=1000)
    group.validate(efa_capable_types())
    spec = group_spec(group, template=TEMPLATE, subnet_id="subnet-0a", security_group_ids=["sg-1"],
                      deep_health_checks=["InstanceStress"])
    assert spec == {
        "InstanceGroupName": "train", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 4,
        "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE, "ThreadsPerCore": 2,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 1000}}],
        "OverrideVpcConfig": {"SecurityGroupIds": ["sg-1"], "Subnets": ["subnet-0a"]},
        "OnStartDeepHealthChecks": ["InstanceStress"],
        "CapacityRequirements": {"Spot": {}}, "NetworkInterface": {"InterfaceType": "efa-only"}}


@pytest.mark.parametrize(("group", "field"), [
    (NewGroup("Bad_Name", "ml.m5.xlarge", 1), "name"),
    (NewGroup("ok", "m5.xlarge", 1), "instance_type"),
    (NewGroup("ok", "ml.m5.xlarge", 0), "count"),
    (NewGroup("ok", "ml.m5.xlarge", 1, ebs_gb=0), "ebs_gb"),
    (NewGroup("ok", "ml.m5.xlarge", 1, capacity_type=CapacityType.TRAINING_PLAN),
     "training_plan_arn"),
    (NewGroup("ok", "ml.m5.xlarge", 1, training_plan_arn="arn:x"), "training_plan_arn"),
    (NewGroup("ok", "ml.m5.xlarge", 1, subnet_id="subnet-1", new_subnet=True), "subnet_id"),
    (NewGroup("ok", "ml.g5.48xlarge", 1, efa_only=True), "efa_only"),
])
def test_invalid_requests_name_the_field(group: NewGroup, field: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        group.validate(efa_capable_types())
    assert refused.value.extra["field"] == field


async def test_deep_health_checks_follow_the_cluster_and_the_type(cluster: Cluster) -> None:
    """On when the cluster uses them, and only those HyperPod defines for the new type: none
    for a CPU group, no connectivity check without EFA."""
    checks = ["InstanceStress", "InstanceConnectivity"]
    cluster.stack.aws("sagemaker").update_cluster(ClusterName=cluster.name, InstanceGroups=[{
        "InstanceGroupName": FIRST_GROUP, "InstanceType": FIRST_TYPE, "InstanceCount": 1,
        "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE, "ThreadsPerCore": 1,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}],
        "OnStartDeepHealthChecks": checks}])
    cluster.stack.advance(60)
    async with cluster.stack.client("operator") as client:
        r = await client.post("/api/v1/clusters/gpu/instance-groups", params={"dry_run": "true"},
                              json={"name": "more", "instance_type": "ml.m5.xlarge",
                                    "count": 2})
        gpu = await client.post("/api/v1/clusters/gpu/instance-groups",
                                params={"dry_run": "true"},
                                json={"name": "small", "instance_type": "ml.g5.xlarge",
                                      "count": 1})
    assert r.status_code == 200, r.text
    plan = r.json()["plan"]
    assert "OnStartDeepHealthChecks" not in plan["instance_group"]
    assert any("deep health checks: none" in n for n in plan["notes"])
    assert gpu.json()["plan"]["instance_group"]["OnStartDeepHealthChecks"] == ["InstanceStress"]
    assert plan["availability_zone"] == "us-west-2a"  # the first group's AZ by default
    assert plan["instance_group"]["LifeCycleConfig"] == LIFECYCLE
