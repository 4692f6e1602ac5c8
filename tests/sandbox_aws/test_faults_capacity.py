"""Faults, finite capacity and quotas: the error paths a control plane must handle."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from podplane.domain.hyperpod_failures import cluster_failure as failure_of
from tests.sandbox_aws.conftest import Box, group, hyperpod_cluster, network

AWS_NO_CAPACITY = ("We currently do not have sufficient capacity for the requested instance "
                   "type(s). Please try again.")


def test_injected_insufficient_capacity_fails_creation_with_aws_shape(box: Box) -> None:
    sm = box.client("sagemaker")
    subnet, sg = network(box, az="us-west-2a")
    fault = box.control("POST", "/faults", json={
        "kind": "insufficient_capacity", "instance_type": "ml.p5.48xlarge",
        "availability_zone": "us-west-2a"})
    assert fault["id"].startswith("f-")
    hyperpod_cluster(box, "hp1", [group("gpu", "ml.p5.48xlarge", 2)], subnet, sg)
    assert sm.describe_cluster(ClusterName="hp1")["ClusterStatus"] == "Creating"
    box.advance(100)
    assert sm.describe_cluster(ClusterName="hp1")["ClusterStatus"] == "RollingBack"
    box.advance(200)
    failed = sm.describe_cluster(ClusterName="hp1")
    assert failed["ClusterStatus"] == "Failed"
    # AWS's words and nothing else: AWS never says where capacity would be
    assert failed["FailureMessage"] == AWS_NO_CAPACITY
    assert sm.list_cluster_nodes(ClusterName="hp1")["ClusterNodeSummaries"] == []
    err = failure_of(failed)
    assert err is not None and err.code == "insufficient_capacity" and err.retryable


def test_finite_capacity_per_az_without_any_fault(box: Box) -> None:
    sm = box.client("sagemaker")
    subnet, sg = network(box, az="us-west-2c")  # 4 x p5 free in 2c by default
    hyperpod_cluster(box, "big", [group("gpu", "ml.p5.48xlarge", 5)], subnet, sg)
    box.advance(300)
    failed = sm.describe_cluster(ClusterName="big")
    assert failed["ClusterStatus"] == "Failed"
    assert failed["FailureMessage"] == AWS_NO_CAPACITY
    box.control("PUT", "/capacity", json={"instance_type": "ml.p5.48xlarge",
                                          "availability_zone": "us-west-2c", "count": 8})
    hyperpod_cluster(box, "fits", [group("gpu", "ml.p5.48xlarge", 5)], subnet, sg)
    box.advance(700)
    assert sm.describe_cluster(ClusterName="fits")["ClusterStatus"] == "InService"
    placed = sm.describe_cluster_node(ClusterName="fits", NodeId=sm.list_cluster_nodes(
        ClusterName="fits")["ClusterNodeSummaries"][0]["InstanceId"])
    assert placed["NodeDetails"]["Placement"]["AvailabilityZone"] == "us-west-2c"


def test_quota_exceeded_is_resource_limit_exceeded(box: Box) -> None:
    sm = box.client("sagemaker")
    box.control("PUT", "/quotas", json={"instance_type": "ml.g5.8xlarge", "value": 2})
    with pytest.raises(ClientError) as err:
        hyperpod_cluster(box, "hp1", [group("gpu", "ml.g5.8xlarge", 3)])
    assert err.value.response["Error"]["Code"] == "ResourceLimitExceeded"
    assert "'ml.g5.8xlarge for cluster usage' is 2 Instances" in \
        err.value.response["Error"]["Message"]
    assert sm.list_clusters()["ClusterSummaries"] == []
    box.control("POST", "/faults", json={"kind": "quota_exceeded",
                                         "instance_type": "ml.m5.xlarge", "remaining": 1})
    with pytest.raises(ClientError) as forced:
        hyperpod_cluster(box, "hp2", [group("cpu", "ml.m5.xlarge", 1)])
    assert forced.value.response["Error"]["Code"] == "ResourceLimitExceeded"
    hyperpod_cluster(box, "hp2", [group("cpu", "ml.m5.xlarge", 1)])  # consumed


def test_service_quotas_report_sagemaker_cluster_usage(box: Box) -> None:
    sq = box.client("service-quotas")
    quotas = sq.list_service_quotas(ServiceCode="sagemaker", MaxResults=100)["Quotas"]
    by_name = {q["QuotaName"]: q for q in quotas}
    p5 = by_name["ml.p5.48xlarge for cluster usage"]
    assert p5["Value"] == 16.0
    got = sq.get_service_quota(ServiceCode="sagemaker", QuotaCode=p5["QuotaCode"])
    assert got["Quota"]["QuotaName"] == p5["QuotaName"]
    with pytest.raises(ClientError) as err:
        sq.get_service_quota(ServiceCode="sagemaker", QuotaCode="L-00000000")
    assert err.value.response["Error"]["Code"] == "NoSuchResourceException"
    sq.request_service_quota_increase(ServiceCode="sagemaker", QuotaCode=p5["QuotaCode"],
                                      DesiredValue=32)
    assert sq.get_service_quota(ServiceCode="sagemaker",
                                QuotaCode=p5["QuotaCode"])["Quota"]["Value"] == 32.0


def test_throttling_and_access_denied_faults(box: Box) -> None:
    eks, sm = box.client("eks"), box.client("sagemaker")
    box.control("POST", "/faults", json={"kind": "throttling", "service": "eks",
                                         "action": "ListClusters", "remaining": 1})
    with pytest.raises(ClientError) as throttled:
        eks.list_clusters()
    assert throttled.value.response["Error"]["Code"] == "ThrottlingException"
    assert throttled.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert eks.list_clusters()["clusters"] == []  # the fault was used up
    denied = box.control("POST", "/faults", json={"kind": "access_denied",
                                                  "service": "sagemaker"})
    with pytest.raises(ClientError) as err:
        sm.list_clusters()
    assert err.value.response["Error"]["Code"] == "AccessDeniedException"
    assert [f["id"] for f in box.control("GET", "/faults")] == [denied["id"]]
    box.control("DELETE", f"/faults/{denied['id']}")
    assert sm.list_clusters()["ClusterSummaries"] == []


def test_lifecycle_script_failure_fails_the_cluster(box: Box) -> None:
    sm = box.client("sagemaker")
    box.control("POST", "/faults", json={"kind": "cluster_creation_failure", "cluster": "hp1",
                                         "message": "on_create.sh: exit 1 (mount failed)"})
    hyperpod_cluster(box, "hp1", [group("cpu", "ml.m5.xlarge", 1)])
    box.advance(300)
    assert sm.describe_cluster(ClusterName="hp1")["ClusterStatus"] == "Creating"
    box.advance(200)
    assert sm.describe_cluster(ClusterName="hp1")["ClusterStatus"] == "RollingBack"
    box.advance(200)
    failed = sm.describe_cluster(ClusterName="hp1")
    assert failed["ClusterStatus"] == "Failed"
    assert failed["FailureMessage"] == "on_create.sh: exit 1 (mount failed)"
    err = failure_of(failed)
    assert err is not None and err.code == "cluster_failed" and not err.retryable


def test_unknown_fault_kind_is_a_400(box: Box) -> None:
    import httpx
    r = httpx.post(f"{box.url}/_sandbox/faults", json={"kind": "meteor"},
                   headers=box.sandbox.control_headers)
    assert r.status_code == 400 and "unknown fault kind" in r.json()["error"]


@pytest.mark.parametrize(("service", "call", "kind", "code"), [
    ("ec2", lambda c: c.describe_vpcs(), "throttling", "RequestLimitExceeded"),
    ("sts", lambda c: c.get_caller_identity(), "throttling", "Throttling"),
    ("s3", lambda c: c.list_buckets(), "access_denied", "AccessDenied"),
    ("iam", lambda c: c.list_roles(), "access_denied", "AccessDenied"),
])
def test_faults_reach_moto_served_services(box: Box, service: str, call: object, kind: str,
                                           code: str) -> None:
    client = box.client(service)
    box.control("POST", "/faults", json={"kind": kind, "service": service, "remaining": 1})
    with pytest.raises(ClientError) as err:
        call(client)  # type: ignore[operator]
    assert err.value.response["Error"]["Code"] == code
    call(client)  # type: ignore[operator]  # used up: moto answers again


def test_scale_up_without_capacity_leaves_the_group_degraded(box: Box) -> None:
    sm = box.client("sagemaker")
    subnet, sg = network(box, az="us-west-2c")
    hyperpod_cluster(box, "hp1", [group("gpu", "ml.p5.48xlarge", 4)], subnet, sg)
    box.advance(700)
    sm.update_cluster(ClusterName="hp1", InstanceGroups=[group("gpu", "ml.p5.48xlarge", 6)])
    box.advance(700)
    cluster = sm.describe_cluster(ClusterName="hp1")
    gpu = cluster["InstanceGroups"][0]
    assert cluster["ClusterStatus"] == "InService"
    assert (gpu["Status"], gpu["CurrentCount"], gpu["TargetCount"]) == ("Degraded", 4, 6)
    assert "sufficient capacity" in cluster["FailureMessage"]


def _throttle_pattern(box: Box) -> list[bool]:
    eks = box.client("eks")
    box.control("POST", "/faults", json={"kind": "throttling", "service": "eks", "rate": 0.5})
    outcome = []
    for _ in range(30):
        try:
            eks.list_clusters()
            outcome.append(True)
        except ClientError as err:
            assert err.response["Error"]["Code"] == "ThrottlingException"
            outcome.append(False)
    return outcome


def test_throttling_rate_is_a_seeded_fraction(box: Box, tmp_path: object) -> None:
    from pathlib import Path

    from tests.sandbox_aws.conftest import start_box

    first = _throttle_pattern(box)
    assert 5 < first.count(False) < 25  # about half
    twin = start_box(Path(str(tmp_path)) / "twin")  # same seed, same calls, same answers
    try:
        assert _throttle_pattern(twin) == first
    finally:
        twin.sandbox.stop()


def test_continuous_provisioning_keeps_partial_capacity_and_fills_in_later(box: Box) -> None:
    sm = box.client("sagemaker")
    subnet, sg = network(box, az="us-west-2c")  # 4 x p5 free
    hyperpod_cluster(box, "hp1", [group("gpu", "ml.p5.48xlarge", 6)], subnet, sg,
                     NodeProvisioningMode="Continuous")
    box.advance(700)
    cluster = sm.describe_cluster(ClusterName="hp1")
    assert cluster["ClusterStatus"] == "InService"
    assert (cluster["InstanceGroups"][0]["CurrentCount"],
            cluster["InstanceGroups"][0]["TargetCount"]) == (4, 6)
    # the shortfall is an ERROR event of the group, never a FailureMessage on InService
    assert "FailureMessage" not in cluster
    errors = [e for e in sm.list_cluster_events(ClusterName="hp1")["Events"]
              if e["EventLevel"] == "Error"]
    assert [(e["ResourceType"], e.get("InstanceGroupName"), e["Description"])
            for e in errors] == [("InstanceGroup", "gpu", AWS_NO_CAPACITY)]
    box.control("PUT", "/capacity", json={"instance_type": "ml.p5.48xlarge",
                                          "availability_zone": "us-west-2c", "count": 6})
    box.advance(700)
    cluster = sm.describe_cluster(ClusterName="hp1")
    assert cluster["InstanceGroups"][0]["CurrentCount"] == 6
    assert "FailureMessage" not in cluster
