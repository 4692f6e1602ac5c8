"""EC2 slow deletes and dependencies as AWS shows them (docs/sandbox.md, "EC2 networking, slow
deletes and reachability"): each test asserts EC2's own answer (state, error code)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from podplane.domain.cloud_errors import classify
from tests.sandbox_aws.conftest import Box


def _code(err: pytest.ExceptionInfo[ClientError]) -> str:
    return str(err.value.response["Error"]["Code"])


def _nat(box: Box) -> dict[str, Any]:
    """VPC, public subnet, attached IGW, EIP and a NAT gateway in that subnet."""
    ec2 = box.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.0.0/24",
                               AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    alloc = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=alloc)["NatGateway"]
    return {"vpc": vpc, "subnet": subnet, "igw": igw, "alloc": alloc, "nat": nat}


def _state(box: Box, nat_id: str) -> str:
    nats = box.client("ec2").describe_nat_gateways(NatGatewayIds=[nat_id])["NatGateways"]
    return str(nats[0]["State"])


def test_new_nat_is_pending_and_briefly_unknown_by_id(box: Box) -> None:
    net = _nat(box)
    nat_id = net["nat"]["NatGatewayId"]
    ec2 = box.client("ec2")
    with pytest.raises(ClientError) as err:
        ec2.describe_nat_gateways(NatGatewayIds=[nat_id])
    assert _code(err) == "NatGatewayNotFound"
    rt = ec2.create_route_table(VpcId=net["vpc"])["RouteTable"]["RouteTableId"]
    with pytest.raises(ClientError) as err:
        ec2.create_route(RouteTableId=rt, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat_id)
    assert _code(err) == "InvalidNatGatewayID.NotFound"
    box.advance(30)
    assert _state(box, nat_id) == "pending"
    box.advance(120)
    assert _state(box, nat_id) == "available"


def test_nat_deletion_takes_minutes_and_holds_its_eip_and_subnet(box: Box) -> None:
    net = _nat(box)
    nat_id = net["nat"]["NatGatewayId"]
    box.advance(200)
    ec2 = box.client("ec2")
    ec2.delete_nat_gateway(NatGatewayId=nat_id)
    assert _state(box, nat_id) == "deleting"
    with pytest.raises(ClientError) as err:
        ec2.release_address(AllocationId=net["alloc"])
    assert _code(err) == "AuthFailure"
    for call, kw in ((ec2.delete_subnet, {"SubnetId": net["subnet"]}),
                     (ec2.detach_internet_gateway, {"InternetGatewayId": net["igw"],
                                                    "VpcId": net["vpc"]}),
                     (ec2.delete_vpc, {"VpcId": net["vpc"]})):
        with pytest.raises(ClientError) as err:
            call(**kw)
        assert _code(err) == "DependencyViolation", call
    box.advance(290)
    assert _state(box, nat_id) == "deleting"
    box.advance(20)
    assert _state(box, nat_id) == "deleted"
    ec2.release_address(AllocationId=net["alloc"])
    ec2.detach_internet_gateway(InternetGatewayId=net["igw"], VpcId=net["vpc"])
    ec2.delete_internet_gateway(InternetGatewayId=net["igw"])
    ec2.delete_subnet(SubnetId=net["subnet"])
    ec2.delete_vpc(VpcId=net["vpc"])


def test_eks_enis_linger_after_the_cluster_and_block_the_subnet(box: Box) -> None:
    ec2, eks = box.client("ec2"), box.client("eks")
    vpc = ec2.create_vpc(CidrBlock="10.8.0.0/16")["Vpc"]["VpcId"]
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.8.{i}.0/24",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"]
               for i, az in enumerate(("us-west-2a", "us-west-2b"))]
    sg = ec2.create_security_group(GroupName="cp", Description="cp", VpcId=vpc)["GroupId"]
    eks.create_cluster(name="lingers", roleArn="arn:aws:iam::123456789012:role/podplane-test",
                       resourcesVpcConfig={"subnetIds": subnets, "securityGroupIds": [sg]})
    enis = ec2.describe_network_interfaces(
        Filters=[{"Name": "vpc-id", "Values": [vpc]}])["NetworkInterfaces"]
    assert {e["SubnetId"] for e in enis} == set(subnets)
    box.advance(900)
    eks.delete_cluster(name="lingers")
    box.advance(900)  # the cluster is gone ...
    assert "lingers" not in eks.list_clusters()["clusters"]
    with pytest.raises(ClientError) as err:  # ... its ENIs are not, yet
        ec2.delete_subnet(SubnetId=subnets[0])
    assert _code(err) == "DependencyViolation"
    with pytest.raises(ClientError) as err:
        ec2.delete_security_group(GroupId=sg)
    assert _code(err) == "DependencyViolation"
    box.advance(301)
    assert ec2.describe_network_interfaces(
        Filters=[{"Name": "vpc-id", "Values": [vpc]}])["NetworkInterfaces"] == []
    ec2.delete_security_group(GroupId=sg)
    for subnet in subnets:
        ec2.delete_subnet(SubnetId=subnet)


def test_vpc_endpoint_deleting_blocks_the_vpc(box: Box) -> None:
    ec2 = box.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.7.0.0/16")["Vpc"]["VpcId"]
    rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    vpce = ec2.create_vpc_endpoint(VpcId=vpc, VpcEndpointType="Gateway",
                                   ServiceName="com.amazonaws.us-west-2.s3",
                                   RouteTableIds=[rt])["VpcEndpoint"]["VpcEndpointId"]
    ec2.delete_vpc_endpoints(VpcEndpointIds=[vpce])
    state = ec2.describe_vpc_endpoints(VpcEndpointIds=[vpce])["VpcEndpoints"][0]["State"]
    assert state.lower() == "deleting"
    ec2.delete_route_table(RouteTableId=rt)
    with pytest.raises(ClientError) as err:
        ec2.delete_vpc(VpcId=vpc)
    assert _code(err) == "DependencyViolation"
    box.advance(31)
    ec2.delete_vpc(VpcId=vpc)


@pytest.mark.parametrize(("code", "operation", "ours", "retryable"), [
    ("DependencyViolation", "ec2.delete_subnet", "cloud_dependency", True),
    ("AuthFailure", "ec2.release_address", "cloud_dependency", True),  # a NAT holds it
    ("AuthFailure", "ec2.describe_vpcs", "cloud_error", False),        # credentials
    ("NatGatewayNotFound", "ec2.describe_nat_gateways", "cloud_not_found", False),
])
def test_product_classifies_what_ec2_answers(code: str, operation: str, ours: str,
                                             retryable: bool) -> None:
    err = classify(code, "m", operation)
    assert (err.code, err.retryable) == (ours, retryable)
