"""The network step repairs what it finds, and delete finishes against AWS's slow deletes (lag
mode on, the default). Assertions are on what EC2 shows (attachments, routes, states)."""

from __future__ import annotations

from typing import Any

from tests.clusters.helpers import BODY, step, wait_done
from tests.stack import Stack


def _mine(name: str, role: str | None = None) -> list[dict[str, Any]]:
    out = [{"Name": "tag:podplane:cluster", "Values": [name]}]
    if role:
        out.append({"Name": "tag:podplane:role", "Values": [role]})
    return out


def _private_default(stack: Stack, name: str) -> dict[str, Any] | None:
    rt = stack.aws("ec2").describe_route_tables(Filters=_mine(name, "private-rt"))
    routes = rt["RouteTables"][0]["Routes"]
    return next((r for r in routes if r.get("DestinationCidrBlock") == "0.0.0.0/0"), None)


async def test_igw_attach_refused_then_retry_ends_attached(stack: Stack) -> None:
    """Issue 19's scenario: AttachInternetGateway refused once, the network step retried."""
    fault = stack.fault(kind="access_denied", service="ec2", action="AttachInternetGateway")
    body = {**BODY, "name": "igw", "count": 1, "deep_health_checks": False}
    async with stack.client("operator") as api:
        op = (await api.post("/api/v1/clusters", json=body)).json()
        failed = await wait_done(api, op["id"])
        assert step(failed, "network")["error"]["code"] == "access_denied"
        stack.clear_fault(fault["id"])
        await api.post(f"/api/v1/operations/{op['id']}/steps/network/retry")
        done = await wait_done(api, op["id"])
        assert done["status"] == "succeeded", [(s["name"], s["error"]) for s in done["steps"]]
    ec2 = stack.aws("ec2")
    igws = ec2.describe_internet_gateways(Filters=_mine("igw", "igw"))["InternetGateways"]
    vpc = ec2.describe_vpcs(Filters=_mine("igw", "vpc"))["Vpcs"][0]["VpcId"]
    assert [a["VpcId"] for a in igws[0]["Attachments"]] == [vpc]
    nats = ec2.describe_nat_gateways(Filters=_mine("igw", "nat"))["NatGateways"]
    assert [n["State"] for n in nats] == ["available"]
    assert stack.aws("sagemaker").describe_cluster(ClusterName="igw")["ClusterStatus"] == \
        "InService"


async def test_network_step_puts_back_a_removed_route_and_self_rule(stack: Stack) -> None:
    """A create fails after the network step; meanwhile the route and the self rule went away;
    retrying from the network step repairs both before HyperPod launches."""
    fault = stack.fault(kind="insufficient_capacity", instance_type="ml.g5.8xlarge")
    body = {**BODY, "name": "heal", "count": 1, "deep_health_checks": False}
    async with stack.client("operator") as api:
        op = (await api.post("/api/v1/clusters", json=body)).json()
        failed = await wait_done(api, op["id"])
        assert step(failed, "hyperpod")["error"]["code"] == "insufficient_capacity"
        stack.clear_fault(fault["id"])
        ec2 = stack.aws("ec2")
        rt = ec2.describe_route_tables(Filters=_mine("heal", "private-rt"))["RouteTables"][0]
        ec2.delete_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0")
        sg = ec2.describe_security_groups(Filters=_mine("heal", "efa-sg"))["SecurityGroups"][0]
        ec2.revoke_security_group_ingress(GroupId=sg["GroupId"], IpPermissions=[
            {"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": sg["GroupId"]}]}])
        assert _private_default(stack, "heal") is None
        await api.post(f"/api/v1/operations/{op['id']}/steps/network/retry")
        assert (await wait_done(api, op["id"]))["status"] == "succeeded"
    route = _private_default(stack, "heal")
    assert route is not None and route["NatGatewayId"].startswith("nat-")
    sg = ec2.describe_security_groups(GroupIds=[sg["GroupId"]])["SecurityGroups"][0]
    assert any(p["IpProtocol"] == "-1" and p["UserIdGroupPairs"] for p in sg["IpPermissions"])


async def test_delete_waits_for_the_nat_before_releasing_its_address(stack: Stack) -> None:
    body = {**BODY, "name": "slow", "count": 1, "deep_health_checks": False}
    async with stack.client("admin") as api:
        op = (await api.post("/api/v1/clusters", json=body)).json()
        assert (await wait_done(api, op["id"]))["status"] == "succeeded"
        gone = (await api.delete("/api/v1/clusters/slow",
                                 params={"delete_resources": "true", "confirm": "true"})).json()
        done = await wait_done(api, gone["id"])
        assert done["status"] == "succeeded", [(s["name"], s["error"]) for s in done["steps"]]
    ec2 = stack.aws("ec2")
    assert ec2.describe_vpcs(Filters=_mine("slow"))["Vpcs"] == []
    assert ec2.describe_addresses(Filters=_mine("slow"))["Addresses"] == []
    entries = stack.ledger(service="ec2")
    deleted_at = next(e["time"] for e in entries if e["action"] == "DeleteNatGateway")
    released_at = next(e["time"] for e in entries if e["action"] == "ReleaseAddress")
    assert released_at - deleted_at >= 300  # the NAT stayed `deleting` for minutes
