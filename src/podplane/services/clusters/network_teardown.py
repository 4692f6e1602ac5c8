"""Deleting the cluster's network in the order AWS allows, waiting where AWS is slow.

- VPC endpoints and NAT gateways first; a NAT takes minutes to reach `deleted` (aws-sdk#61), and
  its Elastic IP cannot be released before that: EC2 answers `AuthFailure` (kops#938, kops#1604,
  grafiti#89). DeleteNatGateway "disassociates its Elastic IP address, but does not release"
  it (EC2 API reference, DeleteNatGateway).
- ENIs that EKS, HyperPod and VPC-CNI left in the subnets linger after their owners are gone;
  subnets, security groups, the internet gateway and the VPC answer `DependencyViolation` until
  they are (terraform-provider-aws#9495, cloud-nuke#293). We wait for the VPC's ENIs to go,
  then retry each delete with backoff (`ec2_waits.retry_dependency`) up to a deadline.

Every list is read fresh, so a re-run after any failure continues where it stopped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from podplane.cloud.ports_aws import Shape
from podplane.cloud.ports_ec2 import Ec2Port
from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext
from podplane.services.clusters.ec2_waits import retry_dependency, wait_until
from podplane.services.clusters.network import tag_filter

NAT_DELETE_TIMEOUT = 1800.0  # minutes on AWS; a NAT stuck longer needs a human
ENI_TIMEOUT = 1800.0         # requester-managed ENIs can take tens of minutes to go
DEPENDENCY_TIMEOUT = 900.0
GONE = ("deleted", "deleting")
# One EC2 operation of the port (Describe* with Filters, or a delete retried on dependencies).
Ec2Call = Callable[..., Awaitable[Shape]]


class NetworkTeardown:
    def __init__(self, ctx: StepContext, ec2: Ec2Port, cluster: str) -> None:
        self.ctx, self.ec2, self.mine = ctx, ec2, tag_filter(cluster)

    async def _list(self, describe: Ec2Call, key: str, **params: Any) -> list[Shape]:
        found = await describe(Filters=params.pop("Filters", self.mine), **params)
        return list(found.get(key, []))

    async def _retry(self, what: str, operation: Ec2Call, **params: Any) -> None:
        async def call() -> Shape:
            return await operation(**params)
        await retry_dependency(self.ctx, what, call, timeout=DEPENDENCY_TIMEOUT)

    async def run(self) -> list[str]:
        deleted = await self._endpoints() + await self._nats()
        await self._wait_gone(self.ec2.describe_nat_gateways, "NatGateways", "the NAT gateways")
        await self._wait_gone(self.ec2.describe_vpc_endpoints, "VpcEndpoints", "the VPC endpoints")
        for eip in await self._list(self.ec2.describe_addresses, "Addresses"):
            await self._retry(f"release {eip['AllocationId']}", self.ec2.release_address,
                              AllocationId=eip["AllocationId"])
        vpcs = [v["VpcId"] for v in await self._list(self.ec2.describe_vpcs, "Vpcs")]
        for vpc_id in vpcs:
            await self._wait_enis_gone(vpc_id)
        await self._route_tables()
        await self._internet_gateways()
        for subnet in await self._list(self.ec2.describe_subnets, "Subnets"):
            await self._retry(f"delete {subnet['SubnetId']}", self.ec2.delete_subnet,
                              SubnetId=subnet["SubnetId"])
        for sg in await self._list(self.ec2.describe_security_groups, "SecurityGroups"):
            await self._retry(f"delete {sg['GroupId']}", self.ec2.delete_security_group,
                              GroupId=sg["GroupId"])
        for vpc_id in vpcs:
            await self._retry(f"delete {vpc_id}", self.ec2.delete_vpc, VpcId=vpc_id)
        return deleted + vpcs

    async def _endpoints(self) -> list[str]:
        out = []
        for ep in await self._list(self.ec2.describe_vpc_endpoints, "VpcEndpoints"):
            if str(ep.get("State", "")).lower() not in GONE:
                await self.ec2.delete_vpc_endpoints(VpcEndpointIds=[ep["VpcEndpointId"]])
                out.append(ep["VpcEndpointId"])
        return out

    async def _nats(self) -> list[str]:
        out = []
        for nat in await self._list(self.ec2.describe_nat_gateways, "NatGateways"):
            if nat.get("State") not in GONE:
                await self.ec2.delete_nat_gateway(NatGatewayId=nat["NatGatewayId"])
                out.append(nat["NatGatewayId"])
        return out

    async def _wait_gone(self, describe: Ec2Call, key: str, what: str) -> None:
        """Until every one of ours is `deleted` (or `failed`, which AWS cleans up itself)."""
        async def all_deleted() -> bool:
            items = await self._list(describe, key)
            return all(str(i.get("State", "")).lower() in ("deleted", "failed") for i in items)
        await wait_until(self.ctx, f"{what} to be deleted", all_deleted,
                         timeout=NAT_DELETE_TIMEOUT, every=30.0)

    async def _wait_enis_gone(self, vpc_id: str) -> None:
        """Until no ENI is left in the VPC (endpoints', EKS's, HyperPod's, VPC-CNI's)."""
        left: list[Shape] = []

        async def none_left() -> bool:
            left[:] = await self._list(self.ec2.describe_network_interfaces, "NetworkInterfaces",
                                       Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
            return not left
        try:
            await wait_until(self.ctx, f"the network interfaces in {vpc_id} to go", none_left,
                             timeout=ENI_TIMEOUT, every=30.0)
        except CloudError as err:
            names = ", ".join(_eni_name(e) for e in left[:5])
            raise CloudError(
                f"Network interfaces still use {vpc_id}: {names}.", code="network_in_use",
                retryable=False, hint="Something outside podplane may use the VPC; delete "
                "those interfaces (EC2 console > Network Interfaces), then retry this step."
            ) from err

    async def _route_tables(self) -> None:
        for rt in await self._list(self.ec2.describe_route_tables, "RouteTables"):
            for assoc in rt.get("Associations", []):
                if not assoc.get("Main"):
                    await self.ec2.disassociate_route_table(
                        AssociationId=assoc["RouteTableAssociationId"])
            await self._retry(f"delete {rt['RouteTableId']}", self.ec2.delete_route_table,
                              RouteTableId=rt["RouteTableId"])

    async def _internet_gateways(self) -> None:
        for igw in await self._list(self.ec2.describe_internet_gateways, "InternetGateways"):
            igw_id = igw["InternetGatewayId"]
            for att in igw.get("Attachments", []):
                await self._retry(f"detach {igw_id}", self.ec2.detach_internet_gateway,
                                  InternetGatewayId=igw_id, VpcId=att["VpcId"])
            await self._retry(f"delete {igw_id}", self.ec2.delete_internet_gateway,
                              InternetGatewayId=igw_id)


def _eni_name(eni: Shape) -> str:
    return f"{eni['NetworkInterfaceId']} ({eni.get('Description') or 'no description'})"
