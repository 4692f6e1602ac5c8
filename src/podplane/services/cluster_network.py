"""The cluster's network, found by tags before anything is created (describe-before-create).

Every resource carries `podplane:cluster=<name>` and `podplane:role=<role>` tags applied at
creation (TagSpecifications), so a re-run or a resumed step finds what exists instead of
creating a duplicate. Compute subnets are placed by `domain.network.place_compute_subnet`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from podplane.cloud.ports_aws import Ec2Port, Shape
from podplane.domain.network import COMPUTE_TAG, SubnetFact, VpcLayout, place_compute_subnet

CLUSTER_TAG = "podplane:cluster"
ROLE_TAG = "podplane:role"
MANAGED_TAG = "podplane:managed"


def tags(cluster: str, role: str, **more: str) -> list[dict[str, str]]:
    base = {CLUSTER_TAG: cluster, ROLE_TAG: role, MANAGED_TAG: "true",
            "Name": f"podplane-{cluster}-{role}", **more}
    return [{"Key": k, "Value": v} for k, v in base.items()]


def tag_spec(kind: str, cluster: str, role: str, **more: str) -> list[dict[str, Any]]:
    return [{"ResourceType": kind, "Tags": tags(cluster, role, **more)}]


def tag_filter(cluster: str, role: str | None = None) -> list[dict[str, Any]]:
    out = [{"Name": f"tag:{CLUSTER_TAG}", "Values": [cluster]}]
    if role:
        out.append({"Name": f"tag:{ROLE_TAG}", "Values": [role]})
    return out


class Network:
    """Ensures each piece exists; returns the ids the later steps need."""

    def __init__(self, ec2: Ec2Port, cluster: str, region: str) -> None:
        self.ec2, self.cluster, self.region = ec2, cluster, region

    async def _find(self, describe: str, key: str, role: str,
                    extra: list[dict[str, Any]] | None = None) -> Shape | None:
        filters = tag_filter(self.cluster, role) + (extra or [])
        found = await self.ec2.call(describe, Filters=filters)
        items = [i for i in found.get(key, [])
                 if i.get("State") not in ("deleted", "deleting", "failed")]
        return items[0] if items else None

    async def _ensure(self, describe: str, key: str, role: str,
                      create: Callable[[], Awaitable[Shape]],
                      extra: list[dict[str, Any]] | None = None) -> Shape:
        return await self._find(describe, key, role, extra) or await create()

    async def ensure(self, layout: VpcLayout, count: int) -> dict[str, Any]:
        vpc = await self._vpc(layout.vpc_cidr)
        vpc_id = vpc["VpcId"]
        public = [await self._subnet(vpc_id, f"public-{az}", az, cidr, public=True)
                  for az, cidr in layout.public]
        private = [await self._subnet(vpc_id, f"private-{az}", az, cidr)
                   for az, cidr in layout.private]
        compute = await self.compute_subnet(vpc_id, layout.vpc_cidr, layout.compute[0], count)
        igw = await self._igw(vpc_id)
        nat = await self._nat(public[0])
        public_rt = await self._route_table(vpc_id, "public-rt", public, GatewayId=igw)
        private_rt = await self._route_table(vpc_id, "private-rt", private + [compute],
                                             NatGatewayId=nat)
        endpoint = await self._s3_endpoint(vpc_id, [private_rt, public_rt])
        sg = await self._security_group(vpc_id)
        return {"vpc_id": vpc_id, "vpc_cidr": layout.vpc_cidr, "public_subnets": public,
                "private_subnets": private, "compute_subnet": compute,
                "compute_az": layout.compute[0], "internet_gateway": igw, "nat_gateway": nat,
                "route_tables": [public_rt, private_rt], "s3_endpoint": endpoint,
                "security_group": sg}

    async def _vpc(self, cidr: str) -> Shape:
        async def create() -> Shape:
            vpc: Shape = (await self.ec2.call("create_vpc", CidrBlock=cidr,
                                              TagSpecifications=tag_spec("vpc", self.cluster,
                                                                         "vpc")))["Vpc"]
            for attr in ("EnableDnsSupport", "EnableDnsHostnames"):
                await self.ec2.call("modify_vpc_attribute", VpcId=vpc["VpcId"],
                                    **{attr: {"Value": True}})
            return vpc
        return await self._ensure("describe_vpcs", "Vpcs", "vpc", create)

    async def _subnet(self, vpc_id: str, role: str, az: str, cidr: str, *,
                      public: bool = False, more: dict[str, str] | None = None) -> str:
        async def create() -> Shape:
            extra = {"kubernetes.io/role/elb": "1"} if public else {}
            out: Shape = (await self.ec2.call(
                "create_subnet", VpcId=vpc_id, CidrBlock=cidr, AvailabilityZone=az,
                TagSpecifications=tag_spec("subnet", self.cluster, role, **extra, **(more or {}))
            ))["Subnet"]
            return out
        found = await self._ensure("describe_subnets", "Subnets", role, create,
                                   [{"Name": "vpc-id", "Values": [vpc_id]}])
        return str(found["SubnetId"])

    async def subnet_facts(self, vpc_id: str) -> list[SubnetFact]:
        found = await self.ec2.call("describe_subnets",
                                    Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
        return [SubnetFact(s["SubnetId"], s["CidrBlock"], s["AvailabilityZone"],
                           int(s.get("AvailableIpAddressCount", 0)),
                           {t["Key"]: t["Value"] for t in s.get("Tags", [])})
                for s in found["Subnets"]]

    async def compute_subnet(self, vpc_id: str, vpc_cidr: str, az: str, count: int) -> str:
        """The one capacity path: place (reuse or create) the /20 compute subnet in `az`."""
        placement = place_compute_subnet(az, await self.subnet_facts(vpc_id), vpc_cidr,
                                         needed_ips=count * 2 + 8)
        if placement.subnet_id:
            return placement.subnet_id
        assert placement.cidr is not None
        return await self._subnet(vpc_id, f"compute-{az}", az, placement.cidr,
                                  more={COMPUTE_TAG: "true",
                                        "karpenter.sh/discovery": self.cluster})

    async def _igw(self, vpc_id: str) -> str:
        async def create() -> Shape:
            igw: Shape = (await self.ec2.call(
                "create_internet_gateway",
                TagSpecifications=tag_spec("internet-gateway", self.cluster, "igw"),
            ))["InternetGateway"]
            await self.ec2.call("attach_internet_gateway", InternetGatewayId=igw[
                "InternetGatewayId"], VpcId=vpc_id)
            return igw
        found = await self._ensure("describe_internet_gateways", "InternetGateways", "igw",
                                   create)
        return str(found["InternetGatewayId"])

    async def _nat(self, public_subnet: str) -> str:
        async def create() -> Shape:
            eip = await self.ec2.call("allocate_address", Domain="vpc",
                                      TagSpecifications=tag_spec("elastic-ip", self.cluster,
                                                                 "nat-eip"))
            out: Shape = (await self.ec2.call(
                "create_nat_gateway", SubnetId=public_subnet, AllocationId=eip["AllocationId"],
                TagSpecifications=tag_spec("natgateway", self.cluster, "nat"),
            ))["NatGateway"]
            return out
        found = await self._ensure("describe_nat_gateways", "NatGateways", "nat", create)
        return str(found["NatGatewayId"])

    async def _route_table(self, vpc_id: str, role: str, subnets: list[str],
                           **target: str) -> str:
        async def create() -> Shape:
            rt: Shape = (await self.ec2.call(
                "create_route_table", VpcId=vpc_id,
                TagSpecifications=tag_spec("route-table", self.cluster, role)))["RouteTable"]
            await self.ec2.call("create_route", RouteTableId=rt["RouteTableId"],
                                DestinationCidrBlock="0.0.0.0/0", **target)
            return rt
        rt = await self._ensure("describe_route_tables", "RouteTables", role, create)
        rt_id = str(rt["RouteTableId"])
        fresh = (await self.ec2.call("describe_route_tables", RouteTableIds=[rt_id]))
        linked = {a.get("SubnetId") for a in fresh["RouteTables"][0].get("Associations", [])}
        for subnet in subnets:
            if subnet not in linked:
                await self.ec2.call("associate_route_table", RouteTableId=rt_id,
                                    SubnetId=subnet)
        return rt_id

    async def _s3_endpoint(self, vpc_id: str, route_tables: list[str]) -> str:
        async def create() -> Shape:
            out: Shape = (await self.ec2.call(
                "create_vpc_endpoint", VpcId=vpc_id, VpcEndpointType="Gateway",
                ServiceName=f"com.amazonaws.{self.region}.s3", RouteTableIds=route_tables,
                TagSpecifications=tag_spec("vpc-endpoint", self.cluster, "s3-endpoint"),
            ))["VpcEndpoint"]
            return out
        found = await self._ensure("describe_vpc_endpoints", "VpcEndpoints", "s3-endpoint",
                                   create)
        return str(found["VpcEndpointId"])

    async def _security_group(self, vpc_id: str) -> str:
        async def create() -> Shape:
            sg = await self.ec2.call(
                "create_security_group", GroupName=f"podplane-{self.cluster}-efa", VpcId=vpc_id,
                Description="podplane: nodes and EFA (all traffic within the group)",
                TagSpecifications=tag_spec("security-group", self.cluster, "efa-sg"))
            rule = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": sg["GroupId"]}]}]
            await self.ec2.call("authorize_security_group_ingress", GroupId=sg["GroupId"],
                                IpPermissions=rule)
            await self.ec2.call("authorize_security_group_egress", GroupId=sg["GroupId"],
                                IpPermissions=rule)
            return sg
        found = await self._ensure("describe_security_groups", "SecurityGroups", "efa-sg",
                                   create)
        return str(found["GroupId"])
