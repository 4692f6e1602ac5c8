"""Control API, mutation ledger, seeded reproducibility and persistence across restarts."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.sandbox_aws.conftest import (
    ROLE,
    Box,
    group,
    hyperpod_cluster,
    network,
    second_subnet,
    start_box,
)
from tests.sandbox_aws.shapes import error_problems, problems

SUBNET = "subnet-0123456789abcdef0"


def test_clock_control(box: Box) -> None:
    start = box.control("GET", "/clock")
    assert start["speed"] == 0
    assert box.advance(90)["now"] == start["now"] + 90
    assert box.control("PUT", "/clock/speed", json={"speed": 5})["speed"] == 5
    assert box.control("GET", "/clock")["now"] >= start["now"] + 90
    bad = httpx.post(f"{box.url}/_sandbox/clock/advance", json={"seconds": -1},
                     headers=box.sandbox.control_headers)
    assert bad.status_code == 400


def test_ledger_records_each_mutation_exactly_once(box: Box) -> None:
    eks, sm = box.client("eks"), box.client("sagemaker")
    subnet, sg = network(box)
    other = second_subnet(box)
    eks.create_cluster(name="eks1", roleArn=ROLE,
                       resourcesVpcConfig={"subnetIds": [subnet, other]},
                       clientRequestToken="tok-1", accessConfig={"authenticationMode": "API"})
    eks.describe_cluster(name="eks1")
    eks.list_clusters()
    box.advance(700)
    hyperpod_cluster(box, "hp1", [group("cpu", "ml.m5.xlarge", 1)], subnet, sg)
    sm.describe_cluster(ClusterName="hp1")
    box.advance(700)
    sm.list_cluster_nodes(ClusterName="hp1")
    creates = box.ledger(action="CreateCluster")
    assert [(e["service"], e["target"]) for e in creates] == [("eks", "eks1"), ("sagemaker", "hp1")]
    assert box.ledger(service="eks", action="CreateCluster")[0]["client_token"] == "tok-1"
    ours = [e for e in box.ledger() if e["service"] in ("eks", "sagemaker")]
    assert {e["action"] for e in ours} == {"CreateCluster"}  # reads never recorded
    failed = httpx.post(f"{box.url}/clusters", json={"name": "x"})  # invalid -> no entry
    assert failed.status_code == 400
    assert len([e for e in box.ledger() if e["service"] in ("eks", "sagemaker")]) == 2
    ec2 = box.client("ec2")
    before = len(box.ledger(service="ec2"))
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    ec2.describe_vpcs()
    assert [(e["action"], e["target"]) for e in box.ledger(service="ec2")[before:]] == [
        ("CreateVpc", vpc)]


def test_reset_clears_everything(box: Box) -> None:
    eks = box.client("eks")
    eks.create_cluster(name="eks1", roleArn=ROLE,
                       resourcesVpcConfig={"subnetIds": [SUBNET]})
    box.control("POST", "/faults", json={"kind": "throttling", "service": "ec2"})
    box.control("POST", "/reset", json={})
    assert eks.list_clusters()["clusters"] == []
    assert box.ledger() == [] and box.control("GET", "/faults") == []


def _node_ids(tmp: Path, seed: int) -> list[str]:
    b = start_box(tmp, seed=seed)
    try:
        hyperpod_cluster(b, "hp1", [group("w", "ml.m5.xlarge", 3)])
        b.advance(700)
        return sorted(n["InstanceId"] for n in b.client("sagemaker").list_cluster_nodes(
            ClusterName="hp1")["ClusterNodeSummaries"])
    finally:
        b.sandbox.stop()


def test_same_seed_same_world(tmp_path: Path) -> None:
    first = _node_ids(tmp_path / "a", seed=42)
    assert first == _node_ids(tmp_path / "b", seed=42)
    assert first != _node_ids(tmp_path / "c", seed=43)


def test_state_and_clock_survive_a_restart(tmp_path: Path) -> None:
    b = start_box(tmp_path)
    subnet, sg = network(b)
    b.client("s3").create_bucket(Bucket="sagemaker-lifecycle",
                                 CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    b.client("s3").put_object(Bucket="sagemaker-lifecycle", Key="on_create.sh", Body=b"echo")
    iam = b.client("iam")
    iam.create_role(RoleName="hp", AssumeRolePolicyDocument='{"Version":"2012-10-17"}')
    managed = "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy"
    iam.attach_role_policy(RoleName="hp", PolicyArn=managed)
    b.client("eks").create_cluster(name="eks2", roleArn=ROLE,
                                   resourcesVpcConfig={"subnetIds": [subnet, second_subnet(b)]},
                                   accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    hyperpod_cluster(b, "hp1", [group("w", "ml.m5.xlarge", 2)], subnet, sg)
    b.advance(300)
    before = b.control("GET", "/clock")["now"]
    b.sandbox.stop()

    again = start_box(tmp_path)
    try:
        assert again.control("GET", "/clock")["now"] == before
        sm, eks = again.client("sagemaker"), again.client("eks")
        assert sm.describe_cluster(ClusterName="hp1")["ClusterStatus"] == "Creating"
        assert eks.describe_cluster(name="eks2")["cluster"]["status"] == "ACTIVE"
        assert again.client("ec2").describe_subnets(SubnetIds=[subnet])["Subnets"][0][
            "AvailabilityZone"] == "us-west-2a"
        buckets = [x["Name"] for x in again.client("s3").list_buckets()["Buckets"]]
        assert "sagemaker-lifecycle" in buckets
        assert again.client("s3").get_object(Bucket="sagemaker-lifecycle",
                                             Key="on_create.sh")["Body"].read() == b"echo"
        attached = again.client("iam").list_attached_role_policies(RoleName="hp")
        assert [p["PolicyArn"] for p in attached["AttachedPolicies"]] == [managed]
        again.advance(700)
        assert sm.describe_cluster(ClusterName="hp1")["ClusterStatus"] == "InService"
        assert [e["action"] for e in again.ledger(service="sagemaker")] == ["CreateCluster"]
    finally:
        again.sandbox.stop()
    assert again.shapes.errors == []


def test_shape_checker_catches_wrong_bodies() -> None:
    assert problems("sagemaker", "DescribeCluster", {"ClusterArn": "a", "ClusterStatus": "Up",
                                                     "InstanceGroups": []}) \
        == ["DescribeCluster.ClusterStatus: 'Up' not in enum"]
    assert "DescribeCluster: missing required ClusterArn" in problems(
        "sagemaker", "DescribeCluster", {"ClusterStatus": "InService", "InstanceGroups": []})
    assert problems("eks", "DescribeCluster", {"cluster": {"nmae": "x"}}) \
        == ["DescribeCluster.cluster: unknown member nmae"]
    assert error_problems("eks", "ResourceNotFoundException", {"msg": "x"}) \
        == ["ResourceNotFoundException: unknown member msg"]
    assert error_problems("sagemaker", "ResourceNotFound", {"__type": "ResourceNotFound",
                                                            "Message": "gone"}) == []


def test_garbage_requests_get_aws_errors_not_tracebacks(box: Box) -> None:
    h = {"Content-Type": "application/x-amz-json-1.1"}
    bad_json = httpx.post(box.url, content=b"{nope", headers={
        **h, "X-Amz-Target": "SageMaker.DescribeCluster"})
    assert bad_json.status_code == 400 and bad_json.json()["__type"] == "SerializationException"
    # internal helpers are not operations: only botocore's operation names are ours
    assert not box.sandbox.hyperpod.handles("Tick")
    assert box.sandbox.hyperpod.handles("DescribeCluster")
    unrouted = httpx.get(f"{box.url}/clusters/x/fargate-profiles")
    assert unrouted.status_code == 400
    assert unrouted.headers["x-amzn-ErrorType"] == "InvalidRequestException"


def test_what_moto_lacks_is_a_clear_501(box: Box) -> None:
    import pytest
    from botocore.exceptions import ClientError

    sm = box.client("sagemaker", attempts=3)
    with pytest.raises(ClientError) as err:
        sm.create_cluster_scheduler_config(Name="s", ClusterArn="arn:x", SchedulerConfig={})
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert err.value.response["ResponseMetadata"]["RetryAttempts"] == 0
    assert "not been implemented" in err.value.response["Error"]["Message"]
