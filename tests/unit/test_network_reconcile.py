"""network_reconcile on the EC2 fake: each function puts back what differs and nothing else."""

from __future__ import annotations

import pytest

from podplane.domain.errors import CloudError
from podplane.services.clusters import network_reconcile as fix
from tests.fakes.ec2 import FakeEc2
from tests.fakes.step import FakeStep


async def test_dns_attributes_that_are_off_are_turned_on() -> None:
    ec2 = FakeEc2()
    vpc = ec2.add("vpc", CidrBlock="10.0.0.0/16")["VpcId"]
    ec2.attributes[(vpc, "EnableDnsSupport")] = True
    await fix.ensure_dns(ec2, vpc)
    assert ec2.calls == [("modify_vpc_attribute",
                          {"VpcId": vpc, "EnableDnsHostnames": {"Value": True}})]
    assert ec2.attributes[(vpc, "EnableDnsHostnames")] is True


async def test_a_healthy_vpc_gets_no_mutating_call() -> None:
    ec2 = FakeEc2()
    vpc = ec2.add("vpc")["VpcId"]
    ec2.attributes.update({(vpc, "EnableDnsSupport"): True, (vpc, "EnableDnsHostnames"): True})
    await fix.ensure_dns(ec2, vpc)
    assert ec2.calls == []


async def test_a_detached_internet_gateway_is_attached_again() -> None:
    ec2 = FakeEc2()
    igw = ec2.add("internet-gateway", Attachments=[])
    await fix.ensure_attached(ec2, igw, "vpc-1")
    assert ec2.get("internet-gateway", igw["InternetGatewayId"])["Attachments"] == [
        {"VpcId": "vpc-1", "State": "available"}]


async def test_a_gateway_attached_to_another_vpc_is_refused_and_left_alone() -> None:
    ec2 = FakeEc2()
    igw = ec2.add("internet-gateway", Attachments=[{"VpcId": "vpc-other"}])
    with pytest.raises(CloudError) as err:
        await fix.ensure_attached(ec2, igw, "vpc-1")
    assert err.value.code == "network_conflict" and "vpc-other" in err.value.message
    assert ec2.calls == []


async def test_a_missing_default_route_is_created() -> None:
    ec2 = FakeEc2()
    rt = ec2.add("route-table", Routes=[{"DestinationCidrBlock": "10.0.0.0/16",
                                         "GatewayId": "local"}], Associations=[])
    await fix.ensure_default_route(ec2, rt, GatewayId="igw-1")
    routes = ec2.get("route-table", rt["RouteTableId"])["Routes"]
    assert {"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": "igw-1", "State": "active"} in routes
    assert ec2.changed() == ["create_route"]


async def test_a_blackhole_default_route_is_replaced() -> None:
    ec2 = FakeEc2()
    rt = ec2.add("route-table", Routes=[{"DestinationCidrBlock": "0.0.0.0/0",
                                         "NatGatewayId": "nat-old", "State": "blackhole"}],
                 Associations=[])
    await fix.ensure_default_route(ec2, rt, NatGatewayId="nat-new")
    routes = ec2.get("route-table", rt["RouteTableId"])["Routes"]
    assert [r["NatGatewayId"] for r in routes] == ["nat-new"]
    assert ec2.changed() == ["replace_route"]


async def test_a_correct_route_is_left_as_it_is() -> None:
    ec2 = FakeEc2()
    rt = ec2.add("route-table", Routes=[{"DestinationCidrBlock": "0.0.0.0/0",
                                         "GatewayId": "igw-1", "State": "active"}])
    await fix.ensure_default_route(ec2, rt, GatewayId="igw-1")
    assert ec2.calls == []


async def test_only_unassociated_subnets_are_associated() -> None:
    ec2 = FakeEc2()
    rt = ec2.add("route-table", Routes=[], Associations=[
        {"RouteTableAssociationId": "rtbassoc-1", "SubnetId": "subnet-a"}])
    await fix.ensure_associations(ec2, rt, ["subnet-a", "subnet-b"])
    assert [p["SubnetId"] for op, p in ec2.calls if op == "associate_route_table"] == [
        "subnet-b"]


async def test_the_s3_endpoint_gets_the_route_tables_it_misses() -> None:
    ec2 = FakeEc2()
    ep = ec2.add("vpc-endpoint", RouteTableIds=["rtb-1"])
    await fix.ensure_endpoint_tables(ec2, ep, ["rtb-1", "rtb-2"])
    assert ec2.get("vpc-endpoint", ep["VpcEndpointId"])["RouteTableIds"] == ["rtb-1", "rtb-2"]


async def test_group_rules_are_added_once() -> None:
    ec2 = FakeEc2()
    sg = ec2.add("security-group", IpPermissions=[], IpPermissionsEgress=[])
    await fix.ensure_group_rules(ec2, sg)
    assert ec2.changed() == ["authorize_security_group_ingress",
                             "authorize_security_group_egress", "authorize_security_group_egress"]
    ec2.calls.clear()
    await fix.ensure_group_rules(ec2, ec2.get("security-group", sg["GroupId"]))
    assert ec2.calls == []


async def test_a_nat_unknown_at_first_is_waited_for() -> None:
    ec2, step = FakeEc2(), FakeStep()
    nat = ec2.add("natgateway", State="available")["NatGatewayId"]
    ec2.fail("describe_nat_gateways", "InvalidNatGatewayID.NotFound")  # boto3#779
    await fix.wait_nat_available(step, ec2, nat)
    assert step.slept == 15.0  # one poll (ec2_waits.POLL) past the not-found answer


async def test_a_failed_nat_fails_the_step_with_its_message() -> None:
    ec2, step = FakeEc2(), FakeStep()
    nat = ec2.add("natgateway", State="failed", FailureMessage="no IGW")["NatGatewayId"]
    with pytest.raises(CloudError) as err:
        await fix.wait_nat_available(step, ec2, nat)
    assert err.value.code == "nat_failed" and "no IGW" in err.value.message
