"""Inspect before create, dry run, and pre-flight refusals before anything is created."""

from __future__ import annotations

from tests.clusters.helpers import BODY, wait_done
from tests.stack import Stack

MUTATING = ("CreateVpc", "CreateCluster", "CreateRole", "CreateBucket")


def mutations(stack: Stack) -> list[str]:
    return [e["action"] for e in stack.ledger() if e["action"] in MUTATING]


async def test_inspect_plan_and_preflight_refusals(stack: Stack) -> None:
    async with stack.client("viewer") as viewer, stack.client("operator") as api:
        azs = (await viewer.get("/api/v1/availability-zones")).json()
        assert {"name": "us-west-2a", "id": "usw2-az2"}.items() <= azs[0].items()
        types = (await viewer.get("/api/v1/instance-types",
                                  params={"availability_zone": "us-west-2d"})).json()
        names = {t["name"] for t in types}
        assert "ml.p5.48xlarge" in names and "ml.g5.xlarge" not in names
        p5 = next(t for t in types if t["name"] == "ml.p5.48xlarge")
        assert p5["gpu_count"] == 8 and p5["efa_interfaces"] > 0 and p5["price_per_hour"] > 0
        quota = (await viewer.get("/api/v1/quotas",
                                  params={"instance_type": "ml.p5.48xlarge"})).json()
        assert quota == {"instance_type": "ml.p5.48xlarge",
                         "quota_name": "ml.p5.48xlarge for cluster usage", "limit": 16,
                         "in_use": 0, "available": 16, "source": "applied"}
        # never increased: ListServiceQuotas omits it, AWS's default (0 for GPUs) applies
        default = (await viewer.get("/api/v1/quotas",
                                    params={"instance_type": "ml.p4d.24xlarge"})).json()
        assert (default["limit"], default["source"]) == (0, "default")
        assert (await viewer.get("/api/v1/training-plans")).json() == []

        plan = await api.post("/api/v1/clusters", params={"dry_run": "true"}, json=BODY)
        assert plan.status_code == 200, plan.text
        described = plan.json()
        assert described["node_recovery"] == "Automatic"
        assert described["node_provisioning_mode"] == "Continuous"
        assert described["network"]["compute"] == ["us-west-2a", "10.0.0.0/20"]
        assert described["instance_group"]["deep_health_checks"] == [
            "InstanceStress", "InstanceConnectivity"]
        assert described["blocked"] is False and described["exists"] is False
        assert described["eta_minutes"] == [85, 130]  # deep health checks add 60-90 min
        same = await viewer.post("/api/v1/cluster-plans", json=BODY)
        assert same.json()["steps"] == described["steps"]

        too_many = await api.post("/api/v1/clusters",
                                  json={**BODY, "instance_type": "ml.p5.48xlarge", "count": 20})
        assert too_many.status_code == 422
        problem = too_many.json()
        assert problem["code"] == "quota_exceeded"
        assert "ml.p5.48xlarge for cluster usage" in problem["detail"]
        assert "Service Quotas" in problem["hint"]
        no_increase = await api.post("/api/v1/clusters", json={
            **BODY, "instance_type": "ml.p4d.24xlarge", "count": 1})
        assert no_increase.status_code == 422
        assert no_increase.json()["code"] == "quota_exceeded"
        assert "AWS's default applies" in no_increase.json()["hint"]

        not_here = await api.post("/api/v1/clusters", json={
            **BODY, "instance_type": "ml.g5.xlarge", "availability_zone": "us-west-2d"})
        assert not_here.status_code == 422
        assert not_here.json()["code"] == "type_not_offered"
        assert "us-west-2a, us-west-2b, us-west-2c" in not_here.json()["hint"]

        bad_name = await api.post("/api/v1/clusters", json={**BODY, "name": "Bad_Name"})
        assert bad_name.status_code == 422
        assert (await viewer.post("/api/v1/clusters", json=BODY)).status_code == 403
        assert (await api.get("/api/v1/clusters")).json()["managed"] == []
    assert mutations(stack) == []


async def test_training_plan_az_is_adopted_only_when_accepted(stack: Stack) -> None:
    sm = stack.aws("sagemaker")
    offer = sm.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge", InstanceCount=2, DurationHours=24,
        TargetResources=["hyperpod-cluster"])["TrainingPlanOfferings"][0]
    arn = sm.create_training_plan(TrainingPlanName="tp1",
                                  TrainingPlanOfferingId=offer["TrainingPlanOfferingId"])[
        "TrainingPlanArn"]
    plan_az = offer["ReservedCapacityOfferings"][0]["AvailabilityZone"]
    other = next(az for az in ("us-west-2a", "us-west-2b", "us-west-2c") if az != plan_az)
    body = {**BODY, "name": "tplan", "instance_type": "ml.p5.48xlarge", "count": 2,
            "availability_zone": other, "capacity_type": "training-plan", "training_plan_arn": arn}
    async with stack.client("operator") as api:
        plans = (await api.get("/api/v1/training-plans")).json()
        assert plans[0]["availability_zone"] == plan_az and plans[0]["arn"] == arn
        refused = await api.post("/api/v1/clusters", json=body)
        assert refused.status_code == 422
        assert refused.json()["code"] == "training_plan_az_adopted"
        dry = (await api.post("/api/v1/cluster-plans", json=body)).json()
        assert dry["availability_zone"] == plan_az
        assert dry["instance_group"]["threads_per_core"] == 2
        assert mutations(stack) == []

        accepted = {**body, "override_warnings": ["training_plan_az_adopted"],
                    "deep_health_checks": False}
        op = (await api.post("/api/v1/clusters", json=accepted)).json()
        done = await wait_done(api, op["id"])
        assert done["status"] == "succeeded", done["steps"]
        assert done["result"]["availability_zone"] == plan_az  # the adopted AZ
    group = sm.describe_cluster(ClusterName="tplan")["InstanceGroups"][0]
    assert group["TrainingPlanArn"] == arn and group["ThreadsPerCore"] == 2
    nodes = sm.list_cluster_nodes(ClusterName="tplan")["ClusterNodeSummaries"]
    zones = {sm.describe_cluster_node(ClusterName="tplan", NodeId=n["InstanceId"])[
        "NodeDetails"]["Placement"]["AvailabilityZone"] for n in nodes}
    assert zones == {plan_az}
