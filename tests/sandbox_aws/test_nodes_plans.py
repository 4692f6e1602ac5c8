"""NodeSource for the Kubernetes side, node-health faults with auto-recovery, training plans,
MLflow tracking servers."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import Box, group, hyperpod_cluster, network


def test_node_source_exposes_instances_for_kubernetes(box: Box) -> None:
    hyperpod_cluster(box, "hp1", [group("w", "ml.g5.8xlarge", 2,
                                        CapacityRequirements={"Spot": {}})])
    source = box.sandbox.node_source
    pending = source.sandbox_nodes("eks1")
    assert [n.status for n in pending] == ["Pending", "Pending"]
    assert source.sandbox_nodes("other-eks") == []
    box.advance(700)
    running = source.sandbox_nodes()
    assert {(n.cluster_name, n.eks_cluster_name, n.group_name, n.status, n.health,
             n.capacity_type) for n in running} == {
        ("hp1", "eks1", "w", "Running", "Schedulable", "spot")}
    assert all(n.instance_id.startswith("i-") and n.instance_type == "ml.g5.8xlarge"
               for n in running)


def test_unhealthy_node_is_labelled_then_auto_replaced(box: Box) -> None:
    sm = box.client("sagemaker")
    hyperpod_cluster(box, "hp1", [group("w", "ml.g5.8xlarge", 2)])
    box.advance(700)
    fault = box.control("POST", "/faults", json={"kind": "node_unhealthy", "cluster": "hp1",
                                                 "action": "replace"})
    sick = fault["applied_to"]
    by_id = {n.instance_id: n for n in box.sandbox.node_source.sandbox_nodes()}
    assert by_id[sick].health == "UnschedulablePendingReplacement"
    assert by_id[sick].fault_reason and "Xid" in by_id[sick].fault_reason
    box.advance(301)  # NodeRecovery=Automatic acts after a few minutes
    statuses = {n["InstanceId"]: n["InstanceStatus"]["Status"]
                for n in sm.list_cluster_nodes(ClusterName="hp1")["ClusterNodeSummaries"]}
    assert statuses[sick] == "ShuttingDown"
    box.advance(800)
    after = {n.instance_id: n for n in box.sandbox.node_source.sandbox_nodes()}
    assert sick not in after and len(after) == 2
    assert {n.health for n in after.values()} == {"Schedulable"}


def test_unhealthy_node_waits_for_a_human_without_auto_recovery(box: Box) -> None:
    hyperpod_cluster(box, "hp1", [group("w", "ml.m5.xlarge", 1)])
    box.client("sagemaker")  # NodeRecovery below is changed through UpdateCluster
    box.advance(700)
    box.client("sagemaker").update_cluster(ClusterName="hp1", NodeRecovery="None",
                                           InstanceGroups=[group("w", "ml.m5.xlarge", 1)])
    box.advance(10)
    fault = box.control("POST", "/faults", json={"kind": "node_unhealthy", "cluster": "hp1",
                                                 "action": "reboot"})
    box.advance(3600)
    node = box.sandbox.node_source.sandbox_nodes()[0]
    assert node.instance_id == fault["applied_to"]
    assert node.health == "UnschedulablePendingReboot" and node.status == "Running"


def test_training_plan_is_bound_to_one_az(box: Box) -> None:
    sm = box.client("sagemaker")
    offers = sm.search_training_plan_offerings(InstanceType="ml.p5.48xlarge", InstanceCount=2,
                                               DurationHours=48,
                                               TargetResources=["hyperpod-cluster"])
    offer = offers["TrainingPlanOfferings"][0]
    plan_az = offer["ReservedCapacityOfferings"][0]["AvailabilityZone"]
    arn = sm.create_training_plan(TrainingPlanName="tp1",
                                  TrainingPlanOfferingId=offer["TrainingPlanOfferingId"])[
        "TrainingPlanArn"]
    plan = sm.describe_training_plan(TrainingPlanName="tp1")
    assert plan["Status"] == "Active" and plan["TotalInstanceCount"] == 2
    assert plan["ReservedCapacitySummaries"][0]["AvailabilityZone"] == plan_az
    other_az = "us-west-2d" if plan_az != "us-west-2d" else "us-west-2a"
    wrong_subnet, sg = network(box, az=other_az)
    with pytest.raises(ClientError) as err:
        hyperpod_cluster(box, "hp1", [group("gpu", "ml.p5.48xlarge", 2, TrainingPlanArn=arn)],
                         wrong_subnet, sg)
    assert err.value.response["Error"]["Code"] == "ValidationException"
    ec2 = box.client("ec2")
    vpc = ec2.describe_subnets(SubnetIds=[wrong_subnet])["Subnets"][0]["VpcId"]
    right = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.16.0/20",
                              AvailabilityZone=plan_az)["Subnet"]["SubnetId"]
    routes = ec2.describe_route_tables(Filters=[{"Name": "association.subnet-id",
                                                 "Values": [wrong_subnet]}])
    ec2.associate_route_table(RouteTableId=routes["RouteTables"][0]["RouteTableId"],
                              SubnetId=right)  # a way out through the NAT, as on AWS
    hyperpod_cluster(box, "hp1", [group("gpu", "ml.p5.48xlarge", 2, TrainingPlanArn=arn)],
                     right, sg)
    box.advance(700)
    assert sm.describe_cluster(ClusterName="hp1")["ClusterStatus"] == "InService"
    assert sm.describe_training_plan(TrainingPlanName="tp1")["InUseInstanceCount"] == 2
    summaries = sm.list_clusters()["ClusterSummaries"]
    assert summaries[0]["TrainingPlanArns"] == [arn]
    assert [p["TrainingPlanName"] for p in sm.list_training_plans()["TrainingPlanSummaries"]] \
        == ["tp1"]


def test_mlflow_tracking_server(box: Box) -> None:
    # the server's role must exist and trust SageMaker, its artifact store must exist
    # (aws/mlflow.py; tests/sandbox_aws/test_mlflow.py has the refusals)
    trust = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"Service": "sagemaker.amazonaws.com"}}]}
    box.client("iam").create_role(RoleName="mlflow", AssumeRolePolicyDocument=json.dumps(trust))
    box.client("s3").create_bucket(Bucket="mlflow-art", CreateBucketConfiguration={
        "LocationConstraint": "us-west-2"})
    box.advance(60)   # IAM propagation
    sm = box.client("sagemaker")
    sm.create_mlflow_tracking_server(TrackingServerName="mlf", ArtifactStoreUri="s3://mlflow-art/mlflow",
                                     RoleArn="arn:aws:iam::123456789012:role/mlflow",
                                     Tags=[{"Key": "team", "Value": "ml"}])
    assert sm.describe_mlflow_tracking_server(TrackingServerName="mlf")[
        "TrackingServerStatus"] == "Creating"
    box.advance(1201)
    ready = sm.describe_mlflow_tracking_server(TrackingServerName="mlf")
    assert ready["TrackingServerStatus"] == "Created" and ready["IsActive"] == "Active"
    assert ready["TrackingServerUrl"].startswith("https://")
    assert sm.list_tags(ResourceArn=ready["TrackingServerArn"])["Tags"] == [
        {"Key": "team", "Value": "ml"}]
