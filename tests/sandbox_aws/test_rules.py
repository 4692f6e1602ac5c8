"""AWS's rules, enforced server-side (docs/sandbox.md "Rules and their sources"): request
validation against the whole service model, HyperPod's network and deep-health-check rules,
continuous-provisioning events, image ids, and Service Quotas' applied vs default values."""

from __future__ import annotations

from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import (
    ROLE,
    Box,
    ensure_eks,
    group,
    hyperpod_cluster,
    network,
)

P4D = "ml.p4d.24xlarge"  # never increased in the sandbox account: AWS's default (0) applies


def raw(box: Box, service: str) -> Any:
    """A client that sends whatever it is given (no client-side validation), as curl would."""
    return boto3.client(service, endpoint_url=box.url, region_name="us-west-2",
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=Config(parameter_validation=False,
                                      retries={"mode": "standard", "total_max_attempts": 1}))


def error(call: Any, **params: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as err:
        call(**params)
    return err.value.response["Error"]["Code"], err.value.response["Error"]["Message"]


def create(box: Box, groups: list[dict[str, Any]], subnet: str | None = None,
           sg: str | None = None, **extra: Any) -> tuple[str, str]:
    return error(hyperpod_cluster, box=box, name="hp1", groups=groups, subnet=subnet, sg=sg,
                 **extra)


# request validation --------------------------------------------------------------------------

def test_every_constraint_of_the_model_is_checked_with_aws_wording(box: Box) -> None:
    sm = raw(box, "sagemaker")
    code, message = error(sm.create_cluster, ClusterName="bad name", InstanceGroups=[{
        "InstanceGroupName": "g", "InstanceType": "ml.x9.huge", "InstanceCount": 7000,
        "ExecutionRole": "not-an-arn", "OnStartDeepHealthChecks": ["Everything"]}],
        NodeRecovery="Sometimes")
    assert code == "ValidationException"
    assert message.startswith("7 validation errors detected: Value 'bad name' at "
                              "'clusterName' failed to satisfy constraint: Member must "
                              "satisfy regular expression pattern: ")
    assert ("Value 'ml.x9.huge' at 'instanceGroups.1.member.instanceType' failed to satisfy "
            "constraint: Member must satisfy enum value set: [ml.p4d.24xlarge, ") in message
    assert ("Value 7000 at 'instanceGroups.1.member.instanceCount' failed to satisfy "
            "constraint: Member must have value less than or equal to 6758") in message
    assert ("Value 'not-an-arn' at 'instanceGroups.1.member.executionRole' failed to satisfy "
            "constraint: Member must have length greater than or equal to 20") in message
    assert ("Value 'Everything' at 'instanceGroups.1.member.onStartDeepHealthChecks.1.member' "
            "failed to satisfy constraint: Member must satisfy enum value set: "
            "[InstanceStress, InstanceConnectivity") in message
    assert ("Value 'Sometimes' at 'nodeRecovery' failed to satisfy constraint: Member must "
            "satisfy enum value set: [Automatic, None]") in message
    missing = error(sm.describe_cluster)
    assert missing == ("ValidationException", "1 validation error detected: Value null at "
                       "'clusterName' failed to satisfy constraint: Member must not be null")
    assert error(sm.describe_cluster, ClusterName=42)[0] == "SerializationException"
    newer_client = httpx.post(box.url, json={"MaxResults": 5, "AddedLater": True}, headers={
        "X-Amz-Target": "SageMaker.ListClusters",
        "Content-Type": "application/x-amz-json-1.1"})
    assert newer_client.status_code == 200  # a member our model lacks is ignored, like AWS
    assert box.ledger(service="sagemaker") == []


def test_eks_and_service_quotas_inputs_are_checked_too(box: Box) -> None:
    code, message = error(raw(box, "eks").create_cluster, name="x", roleArn=ROLE,
                          resourcesVpcConfig={}, accessConfig={"authenticationMode": "OPEN"})
    assert code == "InvalidParameterException"
    assert "Value 'OPEN' at 'accessConfig.authenticationMode' failed to satisfy" in message
    code, message = error(raw(box, "service-quotas").list_service_quotas,
                          ServiceCode="sagemaker", MaxResults=0)
    assert code == "ValidationException"
    assert "Member must have value greater than or equal to 1" in message


# HyperPod ------------------------------------------------------------------------------------

def test_subnets_and_security_groups_must_exist_in_the_eks_vpc(box: Box) -> None:
    subnet, sg = network(box)
    other_subnet, other_sg = network(box)  # a second VPC
    eks = ensure_eks(box, subnet)
    sm = box.client("sagemaker")

    def refused(subnets: list[str], groups: list[str], **group_extra: Any) -> str:
        code, message = error(sm.create_cluster, ClusterName="hp1",
                              InstanceGroups=[group("w", "ml.m5.xlarge", 1, **group_extra)],
                              Orchestrator={"Eks": {"ClusterArn": eks}},
                              VpcConfig={"Subnets": subnets, "SecurityGroupIds": groups})
        assert code == "ValidationException"
        return message

    assert refused(["subnet-0123456789abcdef0"], [sg]) == \
        "The subnet ID 'subnet-0123456789abcdef0' does not exist."
    assert refused([subnet], ["sg-0123456789abcdef0"]) == \
        "The security group 'sg-0123456789abcdef0' does not exist."
    assert "not in the VPC" in refused([other_subnet], [sg])
    assert "not in the VPC" in refused([subnet], [sg], OverrideVpcConfig={
        "Subnets": [subnet], "SecurityGroupIds": [other_sg]})
    assert sm.list_clusters()["ClusterSummaries"] == []


def test_deep_health_checks_only_on_accelerated_types_and_connectivity_only_with_efa(
    box: Box,
) -> None:
    subnet, sg = network(box)
    both = ["InstanceStress", "InstanceConnectivity"]
    code, message = create(box, [group("cpu", "ml.m5.xlarge", 1,
                                       OnStartDeepHealthChecks=["InstanceStress"])], subnet, sg)
    assert code == "ValidationException" and "ml.m5.xlarge" in message
    code, message = create(box, [group("small", "ml.g5.xlarge", 1,
                                       OnStartDeepHealthChecks=both)], subnet, sg)
    assert code == "ValidationException" and "EFA" in message
    hyperpod_cluster(box, "hp1", [group("small", "ml.g5.xlarge", 1,
                                        OnStartDeepHealthChecks=["InstanceStress"]),
                                  group("efa", "ml.g5.8xlarge", 1, OnStartDeepHealthChecks=both)],
                     subnet, sg)
    box.advance(5000)
    sm = box.client("sagemaker")
    code, _ = error(sm.update_cluster, ClusterName="hp1", InstanceGroups=[
        group("cpu", "ml.m5.xlarge", 1, OnStartDeepHealthChecks=["InstanceStress"])])
    assert code == "ValidationException"


def test_capacity_failures_say_only_what_aws_says(box: Box) -> None:
    subnet, sg = network(box, az="us-west-2c")  # 4 x p5 free there
    hyperpod_cluster(box, "hp1", [group("gpu", "ml.p5.48xlarge", 5)], subnet, sg)
    box.advance(300)
    failed = box.client("sagemaker").describe_cluster(ClusterName="hp1")
    assert failed["FailureMessage"] == ("We currently do not have sufficient capacity for the "
                                        "requested instance type(s). Please try again.")


def test_events_exist_only_with_continuous_provisioning(box: Box) -> None:
    sm = box.client("sagemaker")
    subnet, sg = network(box, az="us-west-2c")
    hyperpod_cluster(box, "plain", [group("w", "ml.m5.xlarge", 1)], subnet, sg)
    assert error(sm.list_cluster_events, ClusterName="plain")[0] == "ValidationException"
    hyperpod_cluster(box, "cont", [group("gpu", "ml.p5.48xlarge", 5)], subnet, sg,
                     NodeProvisioningMode="Continuous")
    events = sm.list_cluster_events(ClusterName="cont", SortOrder="Ascending")["Events"]
    assert [(e["ResourceType"], e["EventLevel"]) for e in events] == [
        ("Cluster", "Info")] + [("Instance", "Info")] * 4 + [("InstanceGroup", "Error")]
    newest = sm.list_cluster_events(ClusterName="cont", InstanceGroupName="gpu",
                                    MaxResults=1)["Events"]
    assert newest[0]["EventLevel"] == "Error"  # newest first by default
    detail = sm.describe_cluster_event(ClusterName="cont", EventId=newest[0]["EventId"])
    assert detail["EventDetails"]["Description"] == newest[0]["Description"]


def test_groups_report_their_image_and_update_replaces_the_group_spec(box: Box) -> None:
    sm = box.client("sagemaker")
    labelled = group("w", "ml.m5.xlarge", 1, MinInstanceCount=1,
                     KubernetesConfig={"Labels": {"team": "a"}})
    hyperpod_cluster(box, "hp1", [labelled])
    box.advance(700)
    described = sm.describe_cluster(ClusterName="hp1")["InstanceGroups"][0]
    assert described["CurrentImageId"] == described["DesiredImageId"]
    assert described["CurrentImageId"].startswith("ami-")
    sm.update_cluster(ClusterName="hp1", InstanceGroups=[group("w", "ml.m5.xlarge", 2)])
    after = sm.describe_cluster(ClusterName="hp1")["InstanceGroups"][0]
    assert after["KubernetesConfig"]["DesiredLabels"] == {} and "MinCount" not in after
    assert box.ledger(action="UpdateCluster")[-1]["params"]["image_ids"] == {}


# Service Quotas ------------------------------------------------------------------------------

def test_list_service_quotas_returns_applied_values_only(box: Box) -> None:
    sq = box.client("service-quotas")
    applied = {q["QuotaName"]: q["Value"] for q in sq.list_service_quotas(
        ServiceCode="sagemaker", MaxResults=100)["Quotas"]}
    assert f"{P4D} for cluster usage" not in applied
    assert applied["ml.g5.8xlarge for cluster usage"] == 32.0
    defaults, token = [], None
    while True:
        page = sq.list_aws_default_service_quotas(ServiceCode="sagemaker", MaxResults=100,
                                                  **({"NextToken": token} if token else {}))
        defaults += page["Quotas"]
        token = page.get("NextToken")
        if not token:
            break
    by_name = {q["QuotaName"]: q for q in defaults}
    assert by_name[f"{P4D} for cluster usage"]["Value"] == 0.0  # GPU: 0 in a fresh account
    assert by_name["ml.m5.xlarge for cluster usage"]["Value"] > 0
    code = by_name[f"{P4D} for cluster usage"]["QuotaCode"]
    assert error(sq.get_service_quota, ServiceCode="sagemaker", QuotaCode=code)[0] == \
        "NoSuchResourceException"
    assert sq.get_aws_default_service_quota(ServiceCode="sagemaker",
                                            QuotaCode=code)["Quota"]["Value"] == 0.0
    assert create(box, [group("gpu", P4D, 1)])[0] == "ResourceLimitExceeded"

    box.control("PUT", "/quotas", json={"instance_type": P4D, "value": 2})
    assert sq.get_service_quota(ServiceCode="sagemaker", QuotaCode=code)["Quota"]["Value"] == 2
    box.control("PUT", "/quotas", json={"instance_type": P4D, "value": None})
    assert error(sq.get_service_quota, ServiceCode="sagemaker", QuotaCode=code)[0] == \
        "NoSuchResourceException"
