"""A step re-ensures every property of what it finds: the network step, finding the cluster's
VPC and its pieces by tag, still checks DNS attributes, routes, route table associations and
the security group's rules (a detached gateway: tests/clusters/test_network_reconcile.py; EC2
refuses to detach it while the NAT's address is mapped). The broken state is planted out of band
with boto3 (as a person in the console would), the step is retried, and EC2 shows it repaired
with nothing created twice."""

from __future__ import annotations

from typing import Any

from tests.clusters.helpers import BODY, step, wait_done
from tests.stack import Stack

NAME = "mend"


def _mine(role: str) -> list[dict[str, Any]]:
    return [{"Name": "tag:podplane:cluster", "Values": [NAME]},
            {"Name": "tag:podplane:role", "Values": [role]}]


def _plant_damage(ec2: Any) -> dict[str, str]:
    (vpc,) = ec2.describe_vpcs(Filters=_mine("vpc"))["Vpcs"]
    vpc_id = vpc["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc_id, EnableDnsHostnames={"Value": False})
    ec2.modify_vpc_attribute(VpcId=vpc_id, EnableDnsSupport={"Value": False})
    (igw,) = ec2.describe_internet_gateways(Filters=_mine("igw"))["InternetGateways"]
    (rt,) = ec2.describe_route_tables(Filters=_mine("private-rt"))["RouteTables"]
    ec2.delete_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0")
    (public_rt,) = ec2.describe_route_tables(Filters=_mine("public-rt"))["RouteTables"]
    ec2.delete_route(RouteTableId=public_rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0")
    association = next(a for a in rt["Associations"] if a.get("SubnetId"))
    ec2.disassociate_route_table(AssociationId=association["RouteTableAssociationId"])
    (sg,) = ec2.describe_security_groups(Filters=_mine("efa-sg"))["SecurityGroups"]
    ec2.revoke_security_group_ingress(GroupId=sg["GroupId"], IpPermissions=[
        {"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": sg["GroupId"]}]}])
    return {"vpc": vpc_id, "igw": igw["InternetGatewayId"], "rt": rt["RouteTableId"],
            "public_rt": public_rt["RouteTableId"], "subnet": association["SubnetId"],
            "sg": sg["GroupId"]}


def _default_target(ec2: Any, rt: str) -> str | None:
    (table,) = ec2.describe_route_tables(RouteTableIds=[rt])["RouteTables"]
    route = next((r for r in table["Routes"] if r.get("DestinationCidrBlock") == "0.0.0.0/0"),
                 None)
    return None if route is None else (route.get("NatGatewayId") or route.get("GatewayId"))


async def test_network_step_repairs_everything_it_finds_by_tag(stack: Stack) -> None:
    fault = stack.fault(kind="insufficient_capacity", instance_type="ml.g5.8xlarge")
    body = {**BODY, "name": NAME, "count": 1, "deep_health_checks": False}
    ec2 = stack.aws("ec2")
    async with stack.client("operator") as api:
        op = (await api.post("/api/v1/clusters", json=body)).json()
        failed = await wait_done(api, op["id"])
        assert step(failed, "hyperpod")["error"]["code"] == "insufficient_capacity"
        stack.clear_fault(fault["id"])
        ids = _plant_damage(ec2)
        assert _default_target(ec2, ids["rt"]) is None
        made = {a: len(stack.ledger(service="ec2", action=a))
                for a in ("CreateVpc", "CreateInternetGateway", "CreateNatGateway",
                          "CreateRouteTable", "CreateSecurityGroup", "CreateSubnet")}
        r = await api.post(f"/api/v1/operations/{op['id']}/steps/network/retry")
        assert r.status_code == 202, r.text
        done = await wait_done(api, op["id"])
    assert done["status"] == "succeeded", step(done, "network")
    for attr, key in (("enableDnsSupport", "EnableDnsSupport"),
                      ("enableDnsHostnames", "EnableDnsHostnames")):
        assert ec2.describe_vpc_attribute(VpcId=ids["vpc"], Attribute=attr)[key]["Value"]
    (igw,) = ec2.describe_internet_gateways(InternetGatewayIds=[ids["igw"]])["InternetGateways"]
    assert [a["VpcId"] for a in igw["Attachments"]] == [ids["vpc"]]
    assert str(_default_target(ec2, ids["rt"])).startswith("nat-")
    assert _default_target(ec2, ids["public_rt"]) == ids["igw"]
    (table,) = ec2.describe_route_tables(RouteTableIds=[ids["rt"]])["RouteTables"]
    assert ids["subnet"] in {a.get("SubnetId") for a in table["Associations"]}
    (sg,) = ec2.describe_security_groups(GroupIds=[ids["sg"]])["SecurityGroups"]
    assert any(p["IpProtocol"] == "-1" and p["UserIdGroupPairs"] for p in sg["IpPermissions"])
    for action, before in made.items():  # repaired in place: nothing made a second time
        assert len(stack.ledger(service="ec2", action=action)) == before, action
