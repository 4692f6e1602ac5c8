"""Ec2Port over boto3: what exists and what is offered, asked before proposing choices."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


class Ec2Adapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def availability_zones(self) -> list[Shape]:
        result = await self.aws.call("ec2", "describe_availability_zones")
        return list(result["AvailabilityZones"])

    async def instance_type_offerings(self, instance_types: list[str]) -> list[Shape]:
        names = [t.removeprefix("ml.") for t in instance_types]
        result = await self.aws.call("ec2", "describe_instance_type_offerings",
                                     LocationType="availability-zone",
                                     Filters=[{"Name": "instance-type", "Values": names}])
        return list(result["InstanceTypeOfferings"])

    async def call(self, operation: str, **params: Any) -> Shape:
        return await self.aws.call("ec2", operation, **params)
