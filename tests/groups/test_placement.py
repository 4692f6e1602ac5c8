"""Placement and failure paths: a training plan's AZ wins and gets a new tagged /20 compute
subnet; capacity failures come back classified from DescribeCluster; idempotent adds."""

from __future__ import annotations

from podplane.domain.network import COMPUTE_TAG
from tests.groups.conftest import Cluster, finish, labels_of

BASE = "/api/v1/clusters/gpu/instance-groups"


def _plan_outside_2a(cluster: Cluster, count: int) -> tuple[str, str]:
    sm = cluster.stack.aws("sagemaker")
    offers = sm.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge", InstanceCount=count, DurationHours=48,
        TargetResources=["hyperpod-cluster"])["TrainingPlanOfferings"]
    offer = next(o for o in offers
                 if o["ReservedCapacityOfferings"][0]["AvailabilityZone"] != "us-west-2a")
    arn = sm.create_training_plan(TrainingPlanName="tp-1",
                                  TrainingPlanOfferingId=offer["TrainingPlanOfferingId"])
    return arn["TrainingPlanArn"], offer["ReservedCapacityOfferings"][0]["AvailabilityZone"]


async def test_training_plan_az_is_adopted_and_gets_its_own_compute_subnet(
    cluster: Cluster,
) -> None:
    arn, plan_az = _plan_outside_2a(cluster, 2)
    # training plans exist only for the large accelerated types (botocore's enum)
    body = {"name": "reserved", "instance_type": "ml.p5.48xlarge", "count": 2,
            "availability_zone": "us-west-2a", "capacity_type": "training-plan",
            "training_plan_arn": arn}
    subnets_before = len(cluster.stack.ledger(service="ec2", action="CreateSubnet"))
    async with cluster.stack.client("operator") as client:
        preview = await client.post(BASE, params={"dry_run": "true"}, json=body)
        assert preview.status_code == 200, preview.text
        plan = preview.json()["plan"]
        assert plan["availability_zone"] == plan_az
        assert plan["az_adopted_from_training_plan"] is True
        assert any(plan_az in note and "us-west-2a" in note for note in plan["notes"])
        assert plan["subnet"]["action"] == "create" and plan["subnet"]["cidr"].endswith("/20")
        assert cluster.updates() == []  # a dry run changes nothing

        r = await client.post(BASE, json=body)
        assert r.status_code == 202, r.text
        assert r.json()["plan"]["az_adopted_from_training_plan"] is True
        done = await finish(client, r.json())
    assert done["status"] == "succeeded", done
    assert done["result"]["availability_zone"] == plan_az

    ec2 = cluster.stack.aws("ec2")
    (subnet,) = ec2.describe_subnets(SubnetIds=[done["result"]["subnet_id"]])["Subnets"]
    tags = {t["Key"]: t["Value"] for t in subnet["Tags"]}
    assert subnet["AvailabilityZone"] == plan_az and subnet["CidrBlock"].endswith("/20")
    assert tags[COMPUTE_TAG] == "true" and tags["podplane:cluster"] == "gpu"
    tables = ec2.describe_route_tables(Filters=[{"Name": "association.subnet-id",
                                                 "Values": [subnet["SubnetId"]]}])
    first = ec2.describe_route_tables(Filters=[{"Name": "association.subnet-id",
                                                "Values": [cluster.compute_subnet]}])
    assert tables["RouteTables"][0]["RouteTableId"] == first["RouteTables"][0]["RouteTableId"]
    assert len(cluster.stack.ledger(service="ec2", action="CreateSubnet")) == subnets_before + 1

    nodes = await cluster.kube_nodes(instance_group_name="reserved")
    assert len(nodes) == 2
    assert {labels_of(n)["topology.kubernetes.io/zone"] for n in nodes} == {plan_az}
    assert {labels_of(n)["sagemaker.amazonaws.com/capacity-type"] for n in nodes} == {
        "training-plan"}


async def test_capacity_shortage_fails_the_operation_with_a_classified_error(
    cluster: Cluster,
) -> None:
    cluster.stack.fault(kind="insufficient_capacity", instance_type="ml.g5.xlarge")
    async with cluster.stack.client("operator") as client:
        r = await client.post(BASE, json={"name": "short", "instance_type": "ml.g5.xlarge",
                                          "count": 2, "availability_zone": "us-west-2a"})
        assert r.status_code == 202, r.text
        done = await finish(client, r.json())
        group = (await client.get(f"{BASE}/short")).json()
    assert done["status"] == "failed"
    failed = next(s for s in done["steps"] if s["status"] == "failed")
    assert failed["name"] == "wait-nodes"
    assert failed["error"]["code"] == "insufficient_capacity"
    assert "sufficient capacity" in failed["error"]["message"]
    assert group["status"] == "Degraded" and "capacity" in group["failure_message"]


async def test_same_idempotency_key_gives_the_same_operation_and_a_new_body_is_refused(
    cluster: Cluster,
) -> None:
    body = {"name": "idem", "instance_type": "ml.m5.xlarge", "count": 1}
    async with cluster.stack.client("operator", **{"Idempotency-Key": "add-idem"}) as client:
        first = await client.post(BASE, json=body)
        second = await client.post(BASE, json=body)
        assert first.status_code == second.status_code == 202
        assert first.json()["id"] == second.json()["id"]
        done = await finish(client, first.json())
        assert done["status"] == "succeeded", done
        replay = await client.post(BASE, json=body)  # the group exists now: still the same op
        assert replay.status_code == 202 and replay.json()["id"] == first.json()["id"]
        other = await client.post(BASE, json={**body, "count": 2})
        assert other.status_code == 409
        assert other.json()["code"] == "idempotency_key_reused"
    assert len(cluster.updates()) == 1
