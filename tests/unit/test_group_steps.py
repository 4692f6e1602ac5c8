"""Instance-group cloud reads and steps on the fakes: the VPC found from a group's subnet, the
quota refused before any change, one UpdateCluster, and a group HyperPod cannot fill."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.domain.errors import CloudError, InvalidInput
from podplane.domain.network import COMPUTE_TAG
from podplane.services import scope
from podplane.services.groups import cloud as gc
from podplane.services.groups import steps
from tests.fakes.cloud import Fakes
from tests.fakes.ec2 import FakeEc2
from tests.fakes.step import FakeStep

REF = scope.ClusterRef("alpha", "alpha-hp", "alpha-eks")


def _cluster(fakes: Fakes, *groups: dict[str, Any], **more: Any) -> None:
    fakes.hyperpod.clusters["alpha-hp"] = {
        "ClusterName": "alpha-hp", "ClusterStatus": "InService", "InstanceGroups": list(groups),
        "VpcConfig": {"Subnets": ["subnet-x"], "SecurityGroupIds": ["sg-1"]}, **more}


def _group(name: str = "g1", target: int = 2, current: int = 2, **more: Any) -> dict[str, Any]:
    return {"InstanceGroupName": name, "InstanceType": "ml.g5.8xlarge", "TargetCount": target,
            "CurrentCount": current, "Status": "InService", "ExecutionRole": "arn:role",
            "LifeCycleConfig": {"SourceS3Uri": "s3://b/", "OnCreate": "on_create.sh"}, **more}


async def test_the_network_is_found_from_a_group_subnet_and_marks_it_compute() -> None:
    ec2 = FakeEc2()
    vpc = ec2.add("vpc", CidrBlock="10.1.0.0/16")["VpcId"]
    used = ec2.add("subnet", VpcId=vpc, CidrBlock="10.1.0.0/20", AvailabilityZone="us-west-2a")
    ec2.add("subnet", VpcId=vpc, CidrBlock="10.1.16.0/24", AvailabilityZone="us-west-2b")
    described = {"InstanceGroups": [_group(OverrideVpcConfig={"Subnets": [used["SubnetId"]]})]}
    net = await gc.network(ec2, described, None)
    assert (net.vpc_id, net.vpc_cidr) == (vpc, "10.1.0.0/16")
    compute = [s.subnet_id for s in net.subnets if s.tags.get(COMPUTE_TAG) == "true"]
    assert compute == [used["SubnetId"]]


async def test_a_subnet_is_found_again_by_its_client_token() -> None:
    ec2 = FakeEc2()
    made = ec2.add("subnet", tags={gc.CLIENT_TOKEN_TAG: "tok-1"}, CidrBlock="10.0.0.0/20")
    assert (await gc.subnet_by_token(ec2, "tok-1") or {}).get("SubnetId") == made["SubnetId"]
    assert await gc.subnet_by_token(ec2, "tok-2") is None


async def test_the_quota_is_refused_before_any_change() -> None:
    fakes = Fakes()
    fakes.quotas.set("ml.g5.8xlarge", 3, source="default")
    described = {"InstanceGroups": [_group(target=2)]}
    with pytest.raises(InvalidInput) as err:
        await gc.check_quota(fakes.quotas, described, "ml.g5.8xlarge", 2)
    assert err.value.code == "quota_exceeded" and err.value.extra["in_use"] == 2
    assert err.value.extra["quota_source"] == "default"
    await gc.check_quota(fakes.quotas, described, "ml.g5.8xlarge", 1)  # room for one more


async def test_one_update_is_sent_and_a_resumed_step_does_not_send_it_again() -> None:
    fakes, step = Fakes(), FakeStep()
    _cluster(fakes, _group())
    cloud = fakes.cloud()

    def build(described: dict[str, Any]) -> dict[str, Any]:
        return steps.update_params(described, REF, changes={"g1": {"InstanceCount": 4}})

    await steps.update_once(step, cloud, REF, build, landed=lambda _d: True)
    sent = [p for op, p in fakes.hyperpod.calls if op == "update_cluster"]
    assert [g["InstanceCount"] for g in sent[0]["InstanceGroups"]] == [4]
    resumed = FakeStep()
    resumed.phase_name, resumed.checkpoint = step.phase_name, dict(step.checkpoint)
    await steps.update_once(resumed, cloud, REF, build, landed=lambda _d: True)
    assert fakes.hyperpod.changed().count("update_cluster") == 1


async def test_a_degraded_group_without_capacity_fails_the_wait() -> None:
    fakes, step = Fakes(), FakeStep()
    _cluster(fakes, _group(target=2, current=0, Status="Degraded"),
             FailureMessage="We currently do not have sufficient capacity for ml.g5.8xlarge")
    with pytest.raises(CloudError) as err:
        await steps.wait_group(step, fakes.cloud(), REF, "g1", 2)
    assert err.value.code == "insufficient_capacity" and err.value.retryable


async def test_the_wait_ends_when_every_node_of_the_group_runs() -> None:
    fakes, step = Fakes(), FakeStep()
    _cluster(fakes, _group())
    fakes.hyperpod.nodes["alpha-hp"] = [
        {"InstanceId": f"i-{n}", "InstanceGroupName": "g1",
         "InstanceStatus": {"Status": "Running"}} for n in (2, 1)] + [
        {"InstanceId": "i-9", "InstanceGroupName": "other",
         "InstanceStatus": {"Status": "Pending"}}]
    assert await steps.wait_group(step, fakes.cloud(), REF, "g1", 2) == {
        "instance_ids": ["i-1", "i-2"]}


async def test_a_cluster_that_is_not_in_service_refuses_group_changes() -> None:
    fakes = Fakes()
    _cluster(fakes, _group())
    fakes.hyperpod.clusters["alpha-hp"]["ClusterStatus"] = "Failed"
    with pytest.raises(CloudError) as err:
        await steps.wait_in_service(FakeStep(), fakes.cloud(), REF)
    assert err.value.code == "cluster_not_in_service"
    assert fakes.hyperpod.changed() == []
