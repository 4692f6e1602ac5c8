"""The HyperPod create step on the fakes: the request comes from the one group builder, a
Failed cluster is replaced, an ERROR event fails the step with its classified cause."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from podplane.domain.clusters import FIRST_GROUP, ClusterSpec
from podplane.domain.errors import CloudError
from podplane.domain.instance_groups import CapacityType, NewGroup, group_spec
from podplane.services.clusters import hyperpod
from tests.fakes.cloud import Fakes
from tests.fakes.step import FakeStep

SPEC = ClusterSpec(name="alpha", region="us-west-2", availability_zone="us-west-2a",
                   instance_type="ml.p5.48xlarge", count=2)
FACTS: dict[str, Any] = {
    "network": {"security_group": "sg-1", "compute_subnet": "subnet-c"},
    "lifecycle_uri": "s3://b/podplane/lifecycle/", "hyperpod_role": "arn:aws:iam::1:role/hp",
    "eks_arn": "arn:aws:eks:us-west-2:1:cluster/alpha"}
NO_CAPACITY = "We currently do not have sufficient capacity to launch new ml.p5.48xlarge " \
              "instances. Please try again."


def test_the_create_request_and_a_new_group_share_one_builder() -> None:
    request = hyperpod.create_request(SPEC, FACTS)
    first = request["InstanceGroups"][0]
    added = group_spec(NewGroup(FIRST_GROUP, SPEC.instance_type, 2),
                       template=first, subnet_id="subnet-c", security_group_ids=["sg-1"],
                       deep_health_checks=first["OnStartDeepHealthChecks"])
    assert added == first
    assert first["OverrideVpcConfig"] == {"SecurityGroupIds": ["sg-1"], "Subnets": ["subnet-c"]}
    assert first["ThreadsPerCore"] == 2 and "CapacityRequirements" not in first
    assert request["NodeProvisioningMode"] == "Continuous"


def test_a_spot_cluster_asks_for_spot_capacity() -> None:
    spot = ClusterSpec(name="alpha", region="us-west-2", availability_zone="us-west-2a",
                       instance_type="ml.g5.8xlarge", count=1,
                       capacity_type=CapacityType.SPOT)
    group = hyperpod.create_request(spot, FACTS)["InstanceGroups"][0]
    assert group["CapacityRequirements"] == {"Spot": {}} and group["ThreadsPerCore"] == 1


async def test_the_step_creates_the_cluster_and_waits_for_its_nodes() -> None:
    fakes, step = Fakes(), FakeStep()
    fakes.hyperpod.ready_after = 3
    done = await hyperpod.ensure(step, fakes.cloud(), SPEC, FACTS)
    assert done["ClusterStatus"] == "InService" and hyperpod.filled(done)
    assert fakes.hyperpod.changed() == ["create_cluster"]
    assert step.slept >= hyperpod.POLL


async def test_a_failed_cluster_is_deleted_then_created_again() -> None:
    fakes, step = Fakes(), FakeStep()
    fakes.hyperpod.clusters["alpha"] = {"ClusterName": "alpha", "ClusterStatus": "Failed",
                                        "FailureMessage": "lifecycle script failed"}
    fakes.hyperpod.ready_after = 1
    await hyperpod.ensure(step, fakes.cloud(), SPEC, FACTS)
    assert fakes.hyperpod.changed() == ["delete_cluster", "create_cluster"]
    assert "deleting_failed" in step.phases


async def test_an_error_event_fails_the_step_with_the_capacity_hint() -> None:
    fakes, step = Fakes(), FakeStep()
    fakes.hyperpod.events[("alpha", FIRST_GROUP)] = {
        "EventLevel": "Error", "InstanceGroupName": FIRST_GROUP,
        "Description": NO_CAPACITY}
    with pytest.raises(CloudError) as err:
        await hyperpod.ensure(step, fakes.cloud(), SPEC, FACTS)
    assert err.value.code == "insufficient_capacity" and err.value.retryable
    assert "training plan" in str(err.value.hint)


async def test_an_info_event_only_keeps_the_step_waiting() -> None:
    fakes = Fakes()
    await fakes.hyperpod.create_cluster(hyperpod.create_request(SPEC, FACTS))
    fakes.hyperpod.events[("alpha", FIRST_GROUP)] = {
        "EventLevel": "Info", "Description": "provisioning"}
    cluster = await fakes.hyperpod.describe_cluster("alpha")
    assert cluster is not None
    assert await hyperpod.shortfall_of(fakes.hyperpod, cluster) is None


def test_a_wait_past_the_deadline_fails_retryably() -> None:
    step = FakeStep()
    started = step.clock.now() - timedelta(seconds=hyperpod.WAIT_SECONDS[True] + 60)
    step.checkpoint["wait_started"] = started.isoformat()
    cluster = {"ClusterName": "alpha", "ClusterStatus": "Creating", "InstanceGroups": [
        {"InstanceGroupName": "g", "OnStartDeepHealthChecks": ["InstanceStress"],
         "CurrentCount": 1, "TargetCount": 2}]}
    with pytest.raises(CloudError) as err:
        hyperpod.check_deadline(step, cluster)
    assert err.value.code == "hyperpod_timeout" and "g 1/2" in err.value.message
