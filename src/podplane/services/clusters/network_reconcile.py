"""The properties of network resources that a re-run must put back, whether the resource was
just created or found by its tags (real-aws-behaviour.md, divergence 13; issue 19): VPC DNS
attributes, the internet gateway's attachment, default routes and subnet associations, the S3
endpoint's route tables, the security group's rules, and a NAT gateway that is `available`.

Each function reads the current state and changes only what differs, so a run on a healthy
network makes no mutating call.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_aws import Shape
from podplane.cloud.ports_ec2 import Ec2Port
from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext
from podplane.services.clusters.ec2_waits import wait_until

NAT_TIMEOUT = 1200.0  # kops#944: a NAT takes up to about 10 minutes to become available
ANYWHERE = "0.0.0.0/0"


async def ensure_dns(ec2: Ec2Port, vpc_id: str) -> None:
    """DNS support and hostnames on: EKS private endpoints and HyperPod need both (AWS's
    vpc-stack.yaml sets them)."""
    for attr, key in (("enableDnsSupport", "EnableDnsSupport"),
                      ("enableDnsHostnames", "EnableDnsHostnames")):
        found = await ec2.describe_vpc_attribute(VpcId=vpc_id, Attribute=attr)
        if not found.get(key, {}).get("Value"):
            await ec2.modify_vpc_attribute(VpcId=vpc_id, **{key: {"Value": True}})


async def ensure_attached(ec2: Ec2Port, igw: Shape, vpc_id: str) -> None:
    attachments = igw.get("Attachments", [])
    if any(a.get("VpcId") == vpc_id for a in attachments):
        return
    elsewhere = [a["VpcId"] for a in attachments if a.get("VpcId")]
    if elsewhere:
        raise CloudError(
            f"Internet gateway {igw['InternetGatewayId']} is attached to {elsewhere[0]}, not "
            f"to the cluster's VPC {vpc_id}.", code="network_conflict", retryable=False,
            hint="Detach it in the EC2 console (or delete it), then retry this step.")
    await ec2.attach_internet_gateway(InternetGatewayId=igw["InternetGatewayId"],
                                      VpcId=vpc_id)


async def ensure_default_route(ec2: Ec2Port, rt: Shape, **target: str) -> None:
    """0.0.0.0/0 to `target` (GatewayId=igw-... or NatGatewayId=nat-...), replacing a route
    that points elsewhere or is a blackhole (its NAT or gateway is gone)."""
    (key, value), = target.items()
    for route in rt.get("Routes", []):
        if route.get("DestinationCidrBlock") != ANYWHERE:
            continue
        if route.get(key) == value and route.get("State", "active") == "active":
            return
        await ec2.replace_route(RouteTableId=rt["RouteTableId"],
                                DestinationCidrBlock=ANYWHERE, **target)
        return
    await ec2.create_route(RouteTableId=rt["RouteTableId"],
                           DestinationCidrBlock=ANYWHERE, **target)


async def ensure_associations(ec2: Ec2Port, rt: Shape, subnets: list[str]) -> None:
    linked = {a.get("SubnetId") for a in rt.get("Associations", [])}
    for subnet in subnets:
        if subnet not in linked:
            await ec2.associate_route_table(RouteTableId=rt["RouteTableId"],
                                            SubnetId=subnet)


async def ensure_endpoint_tables(ec2: Ec2Port, endpoint: Shape, tables: list[str]) -> None:
    missing = [t for t in tables if t not in endpoint.get("RouteTableIds", [])]
    if missing:
        await ec2.modify_vpc_endpoint(VpcEndpointId=endpoint["VpcEndpointId"],
                                      AddRouteTableIds=missing)


async def ensure_group_rules(ec2: Ec2Port, group: Shape) -> None:
    """All traffic to and from the group itself (EFA needs it; AWS's security-group-stack.yaml),
    and the default all-traffic egress to 0.0.0.0/0 that nodes need for EKS, ECR and S3."""
    gid = group["GroupId"]
    self_rule = {"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": gid}]}
    if not _has_self(group.get("IpPermissions", []), gid):
        await ec2.authorize_security_group_ingress(GroupId=gid,
                                                   IpPermissions=[self_rule])
    egress = group.get("IpPermissionsEgress", [])
    if not _has_self(egress, gid):
        await ec2.authorize_security_group_egress(GroupId=gid, IpPermissions=[self_rule])
    if not any(p.get("IpProtocol") == "-1" and
               any(r.get("CidrIp") == ANYWHERE for r in p.get("IpRanges", [])) for p in egress):
        await ec2.authorize_security_group_egress(GroupId=gid, IpPermissions=[
            {"IpProtocol": "-1", "IpRanges": [{"CidrIp": ANYWHERE}]}])


def _has_self(perms: list[Shape], gid: str) -> bool:
    return any(p.get("IpProtocol") == "-1" and
               any(pair.get("GroupId") == gid for pair in p.get("UserIdGroupPairs", []))
               for p in perms)


async def wait_nat_available(ctx: StepContext, ec2: Ec2Port, nat_id: str) -> None:
    """Until the NAT is `available`. Just after CreateNatGateway AWS may not know the id yet
    (NatGatewayNotFound, boto3#779): that counts as not yet. A `failed` NAT is an error."""
    async def available() -> bool:
        try:
            found = await ec2.describe_nat_gateways(NatGatewayIds=[nat_id])
        except CloudError as err:
            if err.code == "cloud_not_found":
                return False
            raise
        nat: dict[str, Any] = (found.get("NatGateways") or [{}])[0]
        if nat.get("State") == "failed":
            raise CloudError(
                f"NAT gateway {nat_id} failed: {nat.get('FailureMessage') or 'no reason given'}",
                code="nat_failed", retryable=False,
                hint="Check that the VPC's internet gateway is attached, then retry this step; "
                "a new NAT gateway is created.")
        return nat.get("State") == "available"
    await wait_until(ctx, f"NAT gateway {nat_id} to become available", available,
                     timeout=NAT_TIMEOUT)
