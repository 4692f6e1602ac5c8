"""Ec2Port over boto3: one method per EC2 operation podplane sends (EC2 API Reference)."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


class Ec2Adapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def _call(self, operation: str, **params: Any) -> Shape:
        return await self.aws.call("ec2", operation, **params)

    async def availability_zones(self) -> list[Shape]:
        result = await self._call("describe_availability_zones")
        return list(result["AvailabilityZones"])

    async def instance_type_offerings(self, instance_types: list[str]) -> list[Shape]:
        names = [t.removeprefix("ml.") for t in instance_types]
        result = await self._call("describe_instance_type_offerings",
                                  LocationType="availability-zone",
                                  Filters=[{"Name": "instance-type", "Values": names}])
        return list(result["InstanceTypeOfferings"])

    async def describe_vpcs(self, **params: Any) -> Shape:
        return await self._call("describe_vpcs", **params)

    async def create_vpc(self, **params: Any) -> Shape:
        return await self._call("create_vpc", **params)

    async def delete_vpc(self, **params: Any) -> Shape:
        return await self._call("delete_vpc", **params)

    async def describe_vpc_attribute(self, **params: Any) -> Shape:
        return await self._call("describe_vpc_attribute", **params)

    async def modify_vpc_attribute(self, **params: Any) -> Shape:
        return await self._call("modify_vpc_attribute", **params)

    async def associate_vpc_cidr_block(self, **params: Any) -> Shape:
        return await self._call("associate_vpc_cidr_block", **params)

    async def describe_subnets(self, **params: Any) -> Shape:
        return await self._call("describe_subnets", **params)

    async def create_subnet(self, **params: Any) -> Shape:
        return await self._call("create_subnet", **params)

    async def delete_subnet(self, **params: Any) -> Shape:
        return await self._call("delete_subnet", **params)

    async def describe_network_interfaces(self, **params: Any) -> Shape:
        return await self._call("describe_network_interfaces", **params)

    async def describe_internet_gateways(self, **params: Any) -> Shape:
        return await self._call("describe_internet_gateways", **params)

    async def create_internet_gateway(self, **params: Any) -> Shape:
        return await self._call("create_internet_gateway", **params)

    async def attach_internet_gateway(self, **params: Any) -> Shape:
        return await self._call("attach_internet_gateway", **params)

    async def detach_internet_gateway(self, **params: Any) -> Shape:
        return await self._call("detach_internet_gateway", **params)

    async def delete_internet_gateway(self, **params: Any) -> Shape:
        return await self._call("delete_internet_gateway", **params)

    async def describe_nat_gateways(self, **params: Any) -> Shape:
        return await self._call("describe_nat_gateways", **params)

    async def create_nat_gateway(self, **params: Any) -> Shape:
        return await self._call("create_nat_gateway", **params)

    async def delete_nat_gateway(self, **params: Any) -> Shape:
        return await self._call("delete_nat_gateway", **params)

    async def describe_addresses(self, **params: Any) -> Shape:
        return await self._call("describe_addresses", **params)

    async def allocate_address(self, **params: Any) -> Shape:
        return await self._call("allocate_address", **params)

    async def release_address(self, **params: Any) -> Shape:
        return await self._call("release_address", **params)

    async def describe_route_tables(self, **params: Any) -> Shape:
        return await self._call("describe_route_tables", **params)

    async def create_route_table(self, **params: Any) -> Shape:
        return await self._call("create_route_table", **params)

    async def delete_route_table(self, **params: Any) -> Shape:
        return await self._call("delete_route_table", **params)

    async def create_route(self, **params: Any) -> Shape:
        return await self._call("create_route", **params)

    async def replace_route(self, **params: Any) -> Shape:
        return await self._call("replace_route", **params)

    async def associate_route_table(self, **params: Any) -> Shape:
        return await self._call("associate_route_table", **params)

    async def disassociate_route_table(self, **params: Any) -> Shape:
        return await self._call("disassociate_route_table", **params)

    async def describe_vpc_endpoints(self, **params: Any) -> Shape:
        return await self._call("describe_vpc_endpoints", **params)

    async def create_vpc_endpoint(self, **params: Any) -> Shape:
        return await self._call("create_vpc_endpoint", **params)

    async def modify_vpc_endpoint(self, **params: Any) -> Shape:
        return await self._call("modify_vpc_endpoint", **params)

    async def delete_vpc_endpoints(self, **params: Any) -> Shape:
        return await self._call("delete_vpc_endpoints", **params)

    async def describe_security_groups(self, **params: Any) -> Shape:
        return await self._call("describe_security_groups", **params)

    async def create_security_group(self, **params: Any) -> Shape:
        return await self._call("create_security_group", **params)

    async def delete_security_group(self, **params: Any) -> Shape:
        return await self._call("delete_security_group", **params)

    async def authorize_security_group_ingress(self, **params: Any) -> Shape:
        return await self._call("authorize_security_group_ingress", **params)

    async def authorize_security_group_egress(self, **params: Any) -> Shape:
        return await self._call("authorize_security_group_egress", **params)

    async def describe_security_group_rules(self, **params: Any) -> Shape:
        return await self._call("describe_security_group_rules", **params)

    async def revoke_security_group_ingress(self, **params: Any) -> Shape:
        return await self._call("revoke_security_group_ingress", **params)
