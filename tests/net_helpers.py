"""A way out for nodes in private subnets, as AWS needs it and the sandbox checks it
(docs/sandbox.md, "EC2 networking, slow deletes and reachability"): a public subnet with an
attached internet gateway, a NAT gateway there (waited to `available`), and a private route
table whose default route goes through the NAT."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podplane_sandbox.aws.ec2_lag import NAT_PENDING_SECONDS


def add_way_out(ec2: Any, advance: Callable[[float], Any], vpc: str, public_cidr: str,
                private_subnets: list[str], private_table: str | None = None) -> dict[str, str]:
    public = ec2.create_subnet(VpcId=vpc, CidrBlock=public_cidr,
                               AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    public_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=public_rt, SubnetId=public)
    alloc = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=public, AllocationId=alloc)["NatGateway"]["NatGatewayId"]
    advance(NAT_PENDING_SECONDS)
    private_rt = private_table or ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=private_rt, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat)
    for subnet in private_subnets:
        ec2.associate_route_table(RouteTableId=private_rt, SubnetId=subnet)
    return {"public": public, "igw": igw, "nat": nat, "public_rt": public_rt,
            "private_rt": private_rt, "eip": alloc}
