"""Ec2Port in memory: resources by kind, found by id, tag, VPC or subnet association."""

from __future__ import annotations

import itertools
from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]
# kind -> (Describe* result key, id field, id prefix, Describe* ids parameter, not-found code)
KINDS = {
    "vpc": ("Vpcs", "VpcId", "vpc", "VpcIds", "InvalidVpcID.NotFound"),
    "subnet": ("Subnets", "SubnetId", "subnet", "SubnetIds", "InvalidSubnetID.NotFound"),
    "internet-gateway": ("InternetGateways", "InternetGatewayId", "igw", "InternetGatewayIds",
                         "InvalidInternetGatewayID.NotFound"),
    "natgateway": ("NatGateways", "NatGatewayId", "nat", "NatGatewayIds", "NatGatewayNotFound"),
    "elastic-ip": ("Addresses", "AllocationId", "eipalloc", "AllocationIds",
                   "InvalidAllocationID.NotFound"),
    "route-table": ("RouteTables", "RouteTableId", "rtb", "RouteTableIds",
                    "InvalidRouteTableID.NotFound"),
    "vpc-endpoint": ("VpcEndpoints", "VpcEndpointId", "vpce", "VpcEndpointIds",
                     "InvalidVpcEndpointId.NotFound"),
    "security-group": ("SecurityGroups", "GroupId", "sg", "GroupIds", "InvalidGroup.NotFound"),
    "network-interface": ("NetworkInterfaces", "NetworkInterfaceId", "eni",
                          "NetworkInterfaceIds", "InvalidNetworkInterfaceID.NotFound"),
}


def _matches(item: Shape, flt: Shape) -> bool:
    name, values = flt["Name"], flt["Values"]
    if name.startswith("tag:"):
        tags = {t["Key"]: t["Value"] for t in item.get("Tags", [])}
        return tags.get(name[4:]) in values
    if name == "association.subnet-id":
        return any(a.get("SubnetId") in values for a in item.get("Associations", []))
    field = {"vpc-id": "VpcId", "instance-type": "InstanceType"}[name]
    return item.get(field) in values


class FakeEc2(FakePort):
    service = "ec2"

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[str, dict[str, Shape]] = {kind: {} for kind in KINDS}
        self.attributes: dict[tuple[str, str], bool] = {}
        self._ids = itertools.count(1)
        self.nat_state = "available"  # what a new NAT gateway reports

    # -- the generic verbs ---------------------------------------------------------------
    def add(self, kind: str, tags: dict[str, str] | None = None, **fields: Any) -> Shape:
        _, id_field, prefix, _, _ = KINDS[kind]
        item = {id_field: f"{prefix}-{next(self._ids):04d}", **fields,
                "Tags": [{"Key": k, "Value": v} for k, v in (tags or {}).items()]}
        self.items[kind][item[id_field]] = item
        return item

    def _create(self, kind: str, params: Shape, **fields: Any) -> Shape:
        tags = {t["Key"]: t["Value"] for spec in params.pop("TagSpecifications", [])
                for t in spec["Tags"]}
        return self.add(kind, tags, **params, **fields)

    def _describe(self, kind: str, operation: str, params: Shape) -> Shape:
        self._enter(operation, **params)
        key, id_field, _, ids_param, missing = KINDS[kind]
        found = list(self.items[kind].values())
        for wanted in params.get(ids_param, []):
            if wanted not in self.items[kind]:
                raise self.refuse(operation, missing, wanted)
        if ids_param in params:
            found = [i for i in found if i[id_field] in params[ids_param]]
        for flt in params.get("Filters", []):
            found = [i for i in found if _matches(i, flt)]
        return {key: [dict(i) for i in found]}

    def _delete(self, kind: str, operation: str, item_id: str) -> Shape:
        self._enter(operation, id=item_id)
        self.items[kind].pop(item_id, None)
        return {}

    def get(self, kind: str, item_id: str) -> Shape:
        return self.items[kind][item_id]

    # -- what is offered ----------------------------------------------------------------
    async def availability_zones(self) -> list[Shape]:
        return [{"ZoneName": z, "RegionName": "us-west-2"} for z in ("us-west-2a", "us-west-2b")]

    async def instance_type_offerings(self, instance_types: list[str]) -> list[Shape]:
        return [{"InstanceType": t.removeprefix("ml."), "Location": "us-west-2a"}
                for t in instance_types]

    # -- VPCs -----------------------------------------------------------------------------
    async def describe_vpcs(self, **params: Any) -> Shape:
        return self._describe("vpc", "describe_vpcs", params)

    async def create_vpc(self, **params: Any) -> Shape:
        self._enter("create_vpc", **params)
        cidr = params["CidrBlock"]
        return {"Vpc": self._create("vpc", params, State="available", CidrBlockAssociationSet=[
            {"CidrBlock": cidr, "CidrBlockState": {"State": "associated"}}])}

    async def delete_vpc(self, **params: Any) -> Shape:
        return self._delete("vpc", "delete_vpc", params["VpcId"])

    async def describe_vpc_attribute(self, **params: Any) -> Shape:
        self._enter("describe_vpc_attribute", **params)
        attr = params["Attribute"]
        key = attr[0].upper() + attr[1:]
        return {key: {"Value": self.attributes.get((params["VpcId"], key), False)}}

    async def modify_vpc_attribute(self, **params: Any) -> Shape:
        self._enter("modify_vpc_attribute", **params)
        for key, value in params.items():
            if key != "VpcId":
                self.attributes[(params["VpcId"], key)] = value["Value"]
        return {}

    async def associate_vpc_cidr_block(self, **params: Any) -> Shape:
        self._enter("associate_vpc_cidr_block", **params)
        self.get("vpc", params["VpcId"])["CidrBlockAssociationSet"].append(
            {"CidrBlock": params["CidrBlock"], "CidrBlockState": {"State": "associated"}})
        return {}

    # -- subnets and interfaces ------------------------------------------------------------
    async def describe_subnets(self, **params: Any) -> Shape:
        return self._describe("subnet", "describe_subnets", params)

    async def create_subnet(self, **params: Any) -> Shape:
        self._enter("create_subnet", **params)
        return {"Subnet": self._create("subnet", params, AvailableIpAddressCount=250)}

    async def delete_subnet(self, **params: Any) -> Shape:
        return self._delete("subnet", "delete_subnet", params["SubnetId"])

    async def describe_network_interfaces(self, **params: Any) -> Shape:
        return self._describe("network-interface", "describe_network_interfaces", params)

    # -- gateways and addresses ------------------------------------------------------------
    async def describe_internet_gateways(self, **params: Any) -> Shape:
        return self._describe("internet-gateway", "describe_internet_gateways", params)

    async def create_internet_gateway(self, **params: Any) -> Shape:
        self._enter("create_internet_gateway", **params)
        return {"InternetGateway": self._create("internet-gateway", params, Attachments=[])}

    async def attach_internet_gateway(self, **params: Any) -> Shape:
        self._enter("attach_internet_gateway", **params)
        self.get("internet-gateway", params["InternetGatewayId"])["Attachments"].append(
            {"VpcId": params["VpcId"], "State": "available"})
        return {}

    async def detach_internet_gateway(self, **params: Any) -> Shape:
        self._enter("detach_internet_gateway", **params)
        self.get("internet-gateway", params["InternetGatewayId"])["Attachments"] = []
        return {}

    async def delete_internet_gateway(self, **params: Any) -> Shape:
        return self._delete("internet-gateway", "delete_internet_gateway",
                            params["InternetGatewayId"])

    async def describe_nat_gateways(self, **params: Any) -> Shape:
        return self._describe("natgateway", "describe_nat_gateways", params)

    async def create_nat_gateway(self, **params: Any) -> Shape:
        self._enter("create_nat_gateway", **params)
        return {"NatGateway": self._create("natgateway", params, State=self.nat_state)}

    async def delete_nat_gateway(self, **params: Any) -> Shape:
        self._enter("delete_nat_gateway", **params)
        self.get("natgateway", params["NatGatewayId"])["State"] = "deleted"
        return {}

    async def describe_addresses(self, **params: Any) -> Shape:
        return self._describe("elastic-ip", "describe_addresses", params)

    async def allocate_address(self, **params: Any) -> Shape:
        self._enter("allocate_address", **params)
        return self._create("elastic-ip", params)

    async def release_address(self, **params: Any) -> Shape:
        return self._delete("elastic-ip", "release_address", params["AllocationId"])

    # -- route tables ----------------------------------------------------------------------
    async def describe_route_tables(self, **params: Any) -> Shape:
        return self._describe("route-table", "describe_route_tables", params)

    async def create_route_table(self, **params: Any) -> Shape:
        self._enter("create_route_table", **params)
        return {"RouteTable": self._create("route-table", params, Routes=[], Associations=[])}

    async def delete_route_table(self, **params: Any) -> Shape:
        return self._delete("route-table", "delete_route_table", params["RouteTableId"])

    async def create_route(self, **params: Any) -> Shape:
        self._enter("create_route", **params)
        route = {k: v for k, v in params.items() if k != "RouteTableId"}
        self.get("route-table", params["RouteTableId"])["Routes"].append(
            {**route, "State": "active"})
        return {"Return": True}

    async def replace_route(self, **params: Any) -> Shape:
        self._enter("replace_route", **params)
        table = self.get("route-table", params["RouteTableId"])
        table["Routes"] = [r for r in table["Routes"]
                           if r["DestinationCidrBlock"] != params["DestinationCidrBlock"]]
        route = {k: v for k, v in params.items() if k != "RouteTableId"}
        table["Routes"].append({**route, "State": "active"})
        return {}

    async def associate_route_table(self, **params: Any) -> Shape:
        self._enter("associate_route_table", **params)
        assoc = f"rtbassoc-{next(self._ids):04d}"
        self.get("route-table", params["RouteTableId"])["Associations"].append(
            {"RouteTableAssociationId": assoc, "SubnetId": params["SubnetId"], "Main": False})
        return {"AssociationId": assoc}

    async def disassociate_route_table(self, **params: Any) -> Shape:
        self._enter("disassociate_route_table", **params)
        for table in self.items["route-table"].values():
            table["Associations"] = [a for a in table["Associations"] if
                                     a["RouteTableAssociationId"] != params["AssociationId"]]
        return {}

    # -- VPC endpoints ---------------------------------------------------------------------
    async def describe_vpc_endpoints(self, **params: Any) -> Shape:
        return self._describe("vpc-endpoint", "describe_vpc_endpoints", params)

    async def create_vpc_endpoint(self, **params: Any) -> Shape:
        self._enter("create_vpc_endpoint", **params)
        return {"VpcEndpoint": self._create("vpc-endpoint", params, State="available")}

    async def modify_vpc_endpoint(self, **params: Any) -> Shape:
        self._enter("modify_vpc_endpoint", **params)
        self.get("vpc-endpoint", params["VpcEndpointId"])["RouteTableIds"] += \
            params.get("AddRouteTableIds", [])
        return {"Return": True}

    async def delete_vpc_endpoints(self, **params: Any) -> Shape:
        self._enter("delete_vpc_endpoints", **params)
        for endpoint in params["VpcEndpointIds"]:
            self.get("vpc-endpoint", endpoint)["State"] = "deleted"
        return {"Unsuccessful": []}

    # -- security groups -------------------------------------------------------------------
    async def describe_security_groups(self, **params: Any) -> Shape:
        return self._describe("security-group", "describe_security_groups", params)

    async def create_security_group(self, **params: Any) -> Shape:
        self._enter("create_security_group", **params)
        group = self._create("security-group", params, IpPermissions=[],
                             IpPermissionsEgress=[])
        return {"GroupId": group["GroupId"]}

    async def delete_security_group(self, **params: Any) -> Shape:
        return self._delete("security-group", "delete_security_group", params["GroupId"])

    async def authorize_security_group_ingress(self, **params: Any) -> Shape:
        self._enter("authorize_security_group_ingress", **params)
        tags = [t for spec in params.get("TagSpecifications", []) for t in spec["Tags"]]
        self.get("security-group", params["GroupId"])["IpPermissions"] += [
            {**p, "_tags": tags} for p in params["IpPermissions"]]
        return {"Return": True}

    async def authorize_security_group_egress(self, **params: Any) -> Shape:
        self._enter("authorize_security_group_egress", **params)
        self.get("security-group", params["GroupId"])["IpPermissionsEgress"] += \
            params["IpPermissions"]
        return {"Return": True}

    async def describe_security_group_rules(self, **params: Any) -> Shape:
        """Ingress rules as EC2 lists them, one per source (Filters: group-id only)."""
        self._enter("describe_security_group_rules", **params)
        groups = [f["Values"] for f in params.get("Filters", []) if f["Name"] == "group-id"]
        out = []
        for group in self.items["security-group"].values():
            if groups and group["GroupId"] not in groups[0]:
                continue
            for i, perm in enumerate(group["IpPermissions"]):
                out.append({"SecurityGroupRuleId": f"sgr-{group['GroupId']}-{i}",
                            "GroupId": group["GroupId"], "IsEgress": False,
                            "IpProtocol": perm["IpProtocol"], "FromPort": perm["FromPort"],
                            "ToPort": perm["ToPort"], "Tags": perm.get("_tags", []),
                            **_rule_source(perm)})
        return {"SecurityGroupRules": out}

    async def revoke_security_group_ingress(self, **params: Any) -> Shape:
        self._enter("revoke_security_group_ingress", **params)
        group = self.get("security-group", params["GroupId"])
        gone = set(params["SecurityGroupRuleIds"])
        group["IpPermissions"] = [p for i, p in enumerate(group["IpPermissions"])
                                  if f"sgr-{group['GroupId']}-{i}" not in gone]
        return {"Return": True}


def _rule_source(perm: Shape) -> Shape:
    pairs = perm.get("UserIdGroupPairs") or []
    if pairs:
        return {"ReferencedGroupInfo": {"GroupId": pairs[0]["GroupId"]}}
    ranges = perm.get("IpRanges") or []
    return {"CidrIpv4": ranges[0]["CidrIp"]} if ranges else {}
