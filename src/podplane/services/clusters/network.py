"""The cluster's network, found by tags before anything is created (describe-before-create).

Every resource carries `podplane:cluster=<name>` and `podplane:role=<role>` tags applied at
creation (TagSpecifications), so a re-run or a resumed step finds what exists instead of
creating a duplicate. Compute subnets are placed by `domain.network.place_compute_subnet`.
Whatever is found, its properties (routes, attachments, rules, DNS attributes) are reconciled
on every run by `network_reconcile`, so a run after a partial failure repairs the network.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from podplane.cloud.ports_aws import Shape
from podplane.cloud.ports_ec2 import Ec2Port
from podplane.domain.network import (
    COMPUTE_TAG,
    SubnetFact,
    VpcLayout,
    next_free_block,
    place_compute_subnet,
)
from podplane.domain.subnet_sizing import subnet_ips
from podplane.ops.context import StepContext
from podplane.services.clusters import network_reconcile as fix
from podplane.services.clusters.ec2_waits import wait_until

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


# An EC2 Describe* operation of the port, called with Filters.
Describe = Callable[..., Awaitable[Shape]]


class Network:
    """Ensures each piece exists and is wired; returns the ids the later steps need."""

    def __init__(self, ec2: Ec2Port, cluster: str, region: str) -> None:
        self.ec2, self.cluster, self.region = ec2, cluster, region

    async def _find(self, describe: Describe, key: str, role: str,
                    extra: list[dict[str, Any]] | None = None) -> Shape | None:
        filters = tag_filter(self.cluster, role) + (extra or [])
        found = await describe(Filters=filters)
        items = [i for i in found.get(key, [])
                 if str(i.get("State", "")).lower() not in ("deleted", "deleting", "failed")]
        return items[0] if items else None

    async def _ensure(self, describe: Describe, key: str, role: str,
                      create: Callable[[], Awaitable[Shape]],
                      extra: list[dict[str, Any]] | None = None) -> Shape:
        return await self._find(describe, key, role, extra) or await create()

    async def ensure(self, ctx: StepContext, layout: VpcLayout, instance_type: str,
                     count: int) -> dict[str, Any]:
        vpc = await self._vpc(layout.vpc_cidr)
        vpc_id = vpc["VpcId"]
        public = [await self._subnet(vpc_id, f"public-{az}", az, cidr, public=True)
                  for az, cidr in layout.public]
        private = [await self._subnet(vpc_id, f"private-{az}", az, cidr)
                   for az, cidr in layout.private]
        compute = await self.compute_subnet(ctx, vpc_id, layout.vpc_cidr, layout.compute[0],
                                            subnet_ips(instance_type, count))
        igw = await self._igw(vpc_id)
        public_rt = await self._route_table(vpc_id, "public-rt", public, GatewayId=igw)
        nat = await self._nat(ctx, public[0])
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
            vpc: Shape = (await self.ec2.create_vpc(CidrBlock=cidr,
                                                    TagSpecifications=tag_spec("vpc", self.cluster,
                                                                               "vpc")))["Vpc"]
            return vpc
        vpc = await self._ensure(self.ec2.describe_vpcs, "Vpcs", "vpc", create)
        await fix.ensure_dns(self.ec2, vpc["VpcId"])
        return vpc

    async def _subnet(self, vpc_id: str, role: str, az: str, cidr: str, *,
                      public: bool = False, more: dict[str, str] | None = None) -> str:
        async def create() -> Shape:
            extra = {"kubernetes.io/role/elb": "1"} if public else {}
            out: Shape = (await self.ec2.create_subnet(
                VpcId=vpc_id, CidrBlock=cidr, AvailabilityZone=az,
                TagSpecifications=tag_spec("subnet", self.cluster, role, **extra, **(more or {}))
            ))["Subnet"]
            return out
        found = await self._ensure(self.ec2.describe_subnets, "Subnets", role, create,
                                   [{"Name": "vpc-id", "Values": [vpc_id]}])
        return str(found["SubnetId"])

    async def subnet_facts(self, vpc_id: str) -> list[SubnetFact]:
        found = await self.ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
        return [SubnetFact(s["SubnetId"], s["CidrBlock"], s["AvailabilityZone"],
                           int(s.get("AvailableIpAddressCount", 0)),
                           {t["Key"]: t["Value"] for t in s.get("Tags", [])})
                for s in found["Subnets"]]

    async def control_plane_subnets(self, vpc_id: str, vpc_cidr: str,
                                    azs: list[str]) -> list[str]:
        """The cluster's private subnet in each of `azs` (a /24 made where none exists yet),
        then its public subnets in those AZs: what EKS CreateCluster is given."""
        facts = await self.subnet_facts(vpc_id)
        role_of = {f.subnet_id: f.tags.get(ROLE_TAG, "") for f in facts}
        private, used = [], [f.cidr for f in facts]
        for az in azs:
            found = [f.subnet_id for f in facts if role_of[f.subnet_id] == f"private-{az}"]
            if not found:
                used.append(next_free_block(vpc_cidr, used, 24))
                found = [await self._subnet(vpc_id, f"private-{az}", az, used[-1])]
            private.append(found[0])
        public = [f.subnet_id for az in azs for f in facts
                  if role_of[f.subnet_id] == f"public-{az}"]
        return private + public

    async def compute_subnet(self, ctx: StepContext, vpc_id: str, vpc_cidr: str, az: str,
                             needed_ips: int) -> str:
        """The one capacity path: place (reuse or create) the compute subnet in `az`, sized for
        the nodes' VPC-CNI addresses, in a secondary VPC CIDR when the VPC is full."""
        extra = await vpc_cidrs(self.ec2, vpc_id, vpc_cidr)
        placement = place_compute_subnet(az, await self.subnet_facts(vpc_id), vpc_cidr,
                                         needed_ips=needed_ips, vpc_cidrs=tuple(extra))
        if placement.subnet_id:
            return placement.subnet_id
        if placement.secondary_cidr:
            await add_vpc_cidr(ctx, self.ec2, vpc_id, placement.secondary_cidr)
        assert placement.cidr is not None
        return await self._subnet(vpc_id, f"compute-{az}", az, placement.cidr,
                                  more={COMPUTE_TAG: "true",
                                        "karpenter.sh/discovery": self.cluster})

    async def _igw(self, vpc_id: str) -> str:
        async def create() -> Shape:
            igw: Shape = (await self.ec2.create_internet_gateway(
                TagSpecifications=tag_spec("internet-gateway", self.cluster, "igw"),
            ))["InternetGateway"]
            return igw
        found = await self._ensure(self.ec2.describe_internet_gateways, "InternetGateways", "igw",
                                   create)
        await fix.ensure_attached(self.ec2, found, vpc_id)
        return str(found["InternetGatewayId"])

    async def _nat(self, ctx: StepContext, public_subnet: str) -> str:
        async def create() -> Shape:
            out: Shape = (await self.ec2.create_nat_gateway(
                SubnetId=public_subnet, AllocationId=await self._nat_address(),
                TagSpecifications=tag_spec("natgateway", self.cluster, "nat"),
            ))["NatGateway"]
            return out
        found = await self._ensure(self.ec2.describe_nat_gateways, "NatGateways", "nat", create)
        await fix.wait_nat_available(ctx, self.ec2, str(found["NatGatewayId"]))
        return str(found["NatGatewayId"])

    async def _nat_address(self) -> str:
        """A free Elastic IP of ours (left by a NAT that failed) or a new one."""
        found = await self.ec2.describe_addresses(Filters=tag_filter(self.cluster, "nat-eip"))
        free = [a for a in found.get("Addresses", []) if not a.get("AssociationId")]
        if free:
            return str(free[0]["AllocationId"])
        eip = await self.ec2.allocate_address(Domain="vpc",
                                              TagSpecifications=tag_spec("elastic-ip", self.cluster,
                                                                         "nat-eip"))
        return str(eip["AllocationId"])

    async def _route_table(self, vpc_id: str, role: str, subnets: list[str],
                           **target: str) -> str:
        async def create() -> Shape:
            rt: Shape = (await self.ec2.create_route_table(
                VpcId=vpc_id, TagSpecifications=tag_spec("route-table", self.cluster, role),
            ))["RouteTable"]
            return rt
        rt_id = str((await self._ensure(self.ec2.describe_route_tables, "RouteTables", role,
                                        create))["RouteTableId"])
        fresh = (await self.ec2.describe_route_tables(RouteTableIds=[rt_id]))["RouteTables"][0]
        await fix.ensure_default_route(self.ec2, fresh, **target)
        await fix.ensure_associations(self.ec2, fresh, subnets)
        return rt_id

    async def _s3_endpoint(self, vpc_id: str, route_tables: list[str]) -> str:
        async def create() -> Shape:
            out: Shape = (await self.ec2.create_vpc_endpoint(
                VpcId=vpc_id, VpcEndpointType="Gateway",
                ServiceName=f"com.amazonaws.{self.region}.s3", RouteTableIds=route_tables,
                TagSpecifications=tag_spec("vpc-endpoint", self.cluster, "s3-endpoint"),
            ))["VpcEndpoint"]
            return out
        found = await self._ensure(self.ec2.describe_vpc_endpoints, "VpcEndpoints", "s3-endpoint",
                                   create)
        await fix.ensure_endpoint_tables(self.ec2, found, route_tables)
        return str(found["VpcEndpointId"])

    async def _security_group(self, vpc_id: str) -> str:
        async def create() -> Shape:
            sg = await self.ec2.create_security_group(
                GroupName=f"podplane-{self.cluster}-efa", VpcId=vpc_id,
                Description="podplane: nodes and EFA (all traffic within the group)",
                TagSpecifications=tag_spec("security-group", self.cluster, "efa-sg"))
            return {"GroupId": sg["GroupId"]}
        gid = str((await self._ensure(self.ec2.describe_security_groups, "SecurityGroups", "efa-sg",
                                      create))["GroupId"])
        fresh = (await self.ec2.describe_security_groups(GroupIds=[gid]))["SecurityGroups"][0]
        await fix.ensure_group_rules(self.ec2, fresh)
        return gid


async def vpc_cidrs(ec2: Ec2Port, vpc_id: str, primary: str) -> list[str]:
    """The VPC's associated CIDRs other than `primary`."""
    vpcs = (await ec2.describe_vpcs(VpcIds=[vpc_id]))["Vpcs"]
    sets = vpcs[0].get("CidrBlockAssociationSet", []) if vpcs else []
    return [c["CidrBlock"] for c in sets if c["CidrBlock"] != primary
            and c.get("CidrBlockState", {}).get("State") in ("associated", "associating")]


async def add_vpc_cidr(ctx: StepContext, ec2: Ec2Port, vpc_id: str, cidr: str) -> None:
    """Associate a secondary CIDR (AWS's HyperPod reference adds a /16 for compute) and wait
    until EC2 reports it `associated`; subnets in it fail before that."""
    async def associated() -> bool:
        vpcs = (await ec2.describe_vpcs(VpcIds=[vpc_id]))["Vpcs"]
        return any(c["CidrBlock"] == cidr and
                   c.get("CidrBlockState", {}).get("State") == "associated"
                   for c in vpcs[0].get("CidrBlockAssociationSet", []))
    if not await associated():
        await ec2.associate_vpc_cidr_block(VpcId=vpc_id, CidrBlock=cidr)
    await wait_until(ctx, f"CIDR {cidr} on {vpc_id}", associated, timeout=300, every=5)
