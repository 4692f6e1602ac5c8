"""The cluster network step and its teardown on the EC2 fake: found by tags before created,
repaired on a re-run, deleted in order with DependencyViolation retried."""

from __future__ import annotations

import pytest

from podplane.domain.errors import CloudError
from podplane.domain.network import plan_vpc
from podplane.services.clusters.network import Network
from podplane.services.clusters.network_teardown import NetworkTeardown
from tests.fakes.ec2 import FakeEc2
from tests.fakes.step import FakeStep

LAYOUT = plan_vpc("us-west-2a", ["us-west-2a", "us-west-2b"])
CREATES = ["create_vpc", "create_subnet", "create_internet_gateway", "create_nat_gateway",
           "allocate_address", "create_route_table", "create_vpc_endpoint",
           "create_security_group"]


async def _ensure(ec2: FakeEc2) -> dict[str, object]:
    return await Network(ec2, "alpha", "us-west-2").ensure(FakeStep(), LAYOUT,
                                                           "ml.g5.8xlarge", 2)


async def test_a_first_run_builds_the_whole_network_tagged() -> None:
    ec2 = FakeEc2()
    net = await _ensure(ec2)
    assert len(ec2.items["subnet"]) == 5  # 2 public, 2 private, 1 compute
    vpc = ec2.get("vpc", str(net["vpc_id"]))
    assert {"Key": "podplane:cluster", "Value": "alpha"} in vpc["Tags"]
    assert ec2.attributes[(vpc["VpcId"], "EnableDnsHostnames")] is True
    igw = ec2.get("internet-gateway", str(net["internet_gateway"]))
    assert igw["Attachments"] == [{"VpcId": vpc["VpcId"], "State": "available"}]


async def test_a_second_run_finds_everything_and_creates_nothing() -> None:
    ec2 = FakeEc2()
    first = await _ensure(ec2)
    ec2.calls.clear()
    assert await _ensure(ec2) == first
    assert not [op for op in ec2.changed() if op in CREATES]


async def test_a_re_run_puts_back_a_deleted_route_and_a_detached_gateway() -> None:
    ec2 = FakeEc2()
    net = await _ensure(ec2)
    public_rt = ec2.get("route-table", net["route_tables"][0])  # type: ignore[index]
    public_rt["Routes"] = []
    ec2.get("internet-gateway", str(net["internet_gateway"]))["Attachments"] = []
    ec2.calls.clear()
    await _ensure(ec2)
    assert ec2.changed() == ["attach_internet_gateway", "create_route"]
    assert public_rt["Routes"][0]["GatewayId"] == net["internet_gateway"]


async def test_teardown_retries_a_dependency_violation_then_finishes() -> None:
    ec2, step = FakeEc2(), FakeStep()
    await _ensure(ec2)
    ec2.fail("delete_subnet", "DependencyViolation", "DependencyViolation")
    ec2.calls.clear()
    deleted = await NetworkTeardown(step, ec2, "alpha").run()
    assert all(not items for kind, items in ec2.items.items()
               if kind not in ("natgateway", "vpc-endpoint"))
    assert ec2.changed().count("delete_subnet") == 5 + 2  # two refusals, then each subnet
    assert [n for n in step.notes if "retrying" in n][:1] and len(deleted) == 3


async def test_teardown_releases_the_address_only_after_the_nat_is_deleted() -> None:
    ec2 = FakeEc2()
    await _ensure(ec2)
    ec2.calls.clear()
    await NetworkTeardown(FakeStep(), ec2, "alpha").run()
    order = ec2.changed()
    assert order.index("delete_nat_gateway") < order.index("release_address")
    assert order[-1] == "delete_vpc"


async def test_lingering_interfaces_stop_teardown_with_their_names() -> None:
    ec2, step = FakeEc2(), FakeStep()
    net = await _ensure(ec2)
    ec2.add("network-interface", VpcId=net["vpc_id"], Description="someone else's ENI")
    with pytest.raises(CloudError) as err:
        await NetworkTeardown(step, ec2, "alpha").run()
    assert err.value.code == "network_in_use" and "someone else's ENI" in err.value.message
    assert ec2.items["vpc"]  # the VPC stays until the interfaces are gone
