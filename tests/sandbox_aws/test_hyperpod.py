"""HyperPod emulator: Creating -> InService with Pending -> Running nodes, node operations,
updates with AWS's immutability rules, software updates, deletion."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import ROLE, Box, group, hyperpod_cluster

SUBNET, SG = "subnet-0123456789abcdef0", "sg-0123456789abcdef0"


def two_groups(box: Box, name: str = "hp1", **extra: object) -> str:
    return hyperpod_cluster(box, name, [group("controller", "ml.m5.xlarge", 1),
                                        group("workers", "ml.g5.8xlarge", 2)],
                            **extra)


def status(box: Box, name: str = "hp1") -> str:
    return str(box.client("sagemaker").describe_cluster(ClusterName=name)["ClusterStatus"])


def nodes(box: Box, name: str = "hp1") -> list[dict[str, object]]:
    return list(box.client("sagemaker").list_cluster_nodes(
        ClusterName=name)["ClusterNodeSummaries"])


def test_cluster_with_two_groups_reaches_in_service_and_lists_nodes(box: Box) -> None:
    sm = box.client("sagemaker")
    arn = two_groups(box)
    assert arn.startswith("arn:aws:sagemaker:us-west-2:123456789012:cluster/")
    assert status(box) == "Creating"
    assert {n["InstanceStatus"]["Status"] for n in nodes(box)} == {"Pending"}  # type: ignore[index]
    box.advance(300)
    assert status(box) == "Creating"
    box.advance(400)
    described = sm.describe_cluster(ClusterName="hp1")
    assert described["ClusterStatus"] == "InService"
    assert described["NodeRecovery"] == "Automatic"
    assert described["Orchestrator"]["Eks"]["ClusterArn"].endswith(":cluster/eks1")
    counts = {g["InstanceGroupName"]: (g["CurrentCount"], g["TargetCount"], g["Status"])
              for g in described["InstanceGroups"]}
    assert counts == {"controller": (1, 1, "InService"), "workers": (2, 2, "InService")}
    listed = nodes(box)
    assert len(listed) == 3
    assert all(str(n["InstanceId"]).startswith("i-") for n in listed)
    assert {n["InstanceStatus"]["Status"] for n in listed} == {"Running"}  # type: ignore[index]
    detail = sm.describe_cluster_node(ClusterName="hp1", NodeId=listed[0]["InstanceId"])
    assert detail["NodeDetails"]["Placement"]["AvailabilityZone"].startswith("us-west-2")
    summaries = sm.list_clusters()["ClusterSummaries"]
    assert [(c["ClusterName"], c["ClusterStatus"]) for c in summaries] == [("hp1", "InService")]


def test_deep_health_checks_delay_running(box: Box) -> None:
    hyperpod_cluster(box, "hp1", [group("gpu", "ml.g5.8xlarge", 1,
                                        OnStartDeepHealthChecks=["InstanceStress"])])
    box.advance(700)
    assert [n["InstanceStatus"]["Status"] for n in nodes(box)] == ["DeepHealthCheckInProgress"]
    assert [n.health for n in box.sandbox.node_source.sandbox_nodes()] == ["Unschedulable"]
    box.advance(3600)
    assert status(box) == "InService"


def test_reboot_and_replace_change_status_and_replace_changes_instance_id(box: Box) -> None:
    sm = box.client("sagemaker")
    two_groups(box)
    box.advance(700)
    workers = sorted(str(n["InstanceId"]) for n in nodes(box)
                     if n["InstanceGroupName"] == "workers")
    rebooted = sm.batch_reboot_cluster_nodes(ClusterName="hp1", NodeIds=[workers[0]])
    assert rebooted["Successful"] == [workers[0]]
    replaced = sm.batch_replace_cluster_nodes(ClusterName="hp1", NodeIds=[workers[1]])
    assert replaced["Successful"] == [workers[1]]
    by_id = {n["InstanceId"]: n["InstanceStatus"]["Status"] for n in nodes(box)}  # type: ignore[index]
    assert by_id[workers[0]] == "Pending" and by_id[workers[1]] == "ShuttingDown"
    box.advance(200)
    after = {n["InstanceId"]: n for n in nodes(box) if n["InstanceGroupName"] == "workers"}
    assert workers[0] in after and workers[1] not in after
    assert after[workers[0]]["InstanceStatus"]["Status"] == "Running"  # type: ignore[index]
    new_id = next(i for i in after if i != workers[0])
    assert str(new_id).startswith("i-")
    box.advance(700)
    assert {n["InstanceStatus"]["Status"] for n in nodes(box)} == {"Running"}  # type: ignore[index]
    missing = sm.batch_reboot_cluster_nodes(ClusterName="hp1", NodeIds=["i-00000000000000000"])
    assert missing["Failed"][0]["ErrorCode"] == "InstanceIdNotFound"


def test_batch_delete_shrinks_the_group(box: Box) -> None:
    sm = box.client("sagemaker")
    two_groups(box)
    box.advance(700)
    victim = next(n["InstanceId"] for n in nodes(box) if n["InstanceGroupName"] == "workers")
    assert sm.batch_delete_cluster_nodes(ClusterName="hp1", NodeIds=[victim])["Successful"] \
        == [victim]
    box.advance(130)
    groups = {g["InstanceGroupName"]: g for g in
              sm.describe_cluster(ClusterName="hp1")["InstanceGroups"]}
    assert (groups["workers"]["CurrentCount"], groups["workers"]["TargetCount"]) == (1, 1)


def test_update_cluster_scales_adds_deletes_and_rejects_immutables(box: Box) -> None:
    sm = box.client("sagemaker")
    two_groups(box)
    with pytest.raises(ClientError) as busy:
        sm.update_cluster(ClusterName="hp1", InstanceGroups=[group("workers", "ml.g5.8xlarge", 3)])
    assert busy.value.response["Error"]["Code"] == "ConflictException"
    box.advance(700)
    with pytest.raises(ClientError) as immutable:
        sm.update_cluster(ClusterName="hp1", InstanceGroups=[group("workers", "ml.g5.48xlarge", 2)])
    assert immutable.value.response["Error"]["Code"] == "ValidationException"
    assert "InstanceType" in immutable.value.response["Error"]["Message"]
    sm.update_cluster(ClusterName="hp1",
                      InstanceGroups=[group("workers", "ml.g5.8xlarge", 3),
                                      group("extra", "ml.c5.xlarge", 1)],
                      InstanceGroupsToDelete=["controller"])
    assert status(box) == "Updating"
    box.advance(700)
    described = sm.describe_cluster(ClusterName="hp1")
    assert described["ClusterStatus"] == "InService"
    counts = {g["InstanceGroupName"]: g["CurrentCount"] for g in described["InstanceGroups"]}
    assert counts == {"workers": 3, "extra": 1}
    assert {n["InstanceGroupName"] for n in nodes(box)} == {"workers", "extra"}


def test_update_cluster_software_passes_through_system_updating(box: Box) -> None:
    sm = box.client("sagemaker")
    two_groups(box)
    box.advance(700)
    sm.update_cluster_software(ClusterName="hp1")
    assert status(box) == "SystemUpdating"
    assert {n["InstanceStatus"]["Status"] for n in nodes(box)} == {"SystemUpdating"}  # type: ignore[index]
    box.advance(601)
    assert status(box) == "InService"
    assert all("LastSoftwareUpdateTime" in n for n in nodes(box))


def test_delete_cluster(box: Box) -> None:
    sm = box.client("sagemaker")
    two_groups(box)
    with pytest.raises(ClientError) as creating:
        sm.delete_cluster(ClusterName="hp1")
    assert creating.value.response["Error"]["Code"] == "ConflictException"
    box.advance(700)
    sm.delete_cluster(ClusterName="hp1")
    assert status(box) == "Deleting"
    box.advance(301)
    with pytest.raises(ClientError) as gone:
        sm.describe_cluster(ClusterName="hp1")
    assert gone.value.response["Error"]["Code"] == "ResourceNotFound"


def test_duplicate_and_invalid_creates(box: Box) -> None:
    two_groups(box)
    with pytest.raises(ClientError) as dup:
        two_groups(box)
    assert dup.value.response["Error"]["Code"] == "ResourceInUse"
    with pytest.raises(ClientError) as bad_uri:
        hyperpod_cluster(box, "hp2", [group("g", "ml.m5.xlarge", 1, LifeCycleConfig={
            "SourceS3Uri": "not-a-uri", "OnCreate": "x.sh"})])
    assert bad_uri.value.response["Error"]["Code"] == "ValidationException"


def test_hyperpod_on_eks_needs_an_active_eks_cluster_with_api_auth(box: Box) -> None:
    sm, eks = box.client("sagemaker"), box.client("eks")
    arn = "arn:aws:eks:us-west-2:123456789012:cluster/"
    spec = {"ClusterName": "hp9", "InstanceGroups": [group("w", "ml.m5.xlarge", 1)],
            "VpcConfig": {"Subnets": [SUBNET], "SecurityGroupIds": [SG]}}
    with pytest.raises(ClientError) as missing:
        sm.create_cluster(**spec, Orchestrator={"Eks": {"ClusterArn": arn + "nope"}})
    assert missing.value.response["Error"]["Code"] == "ValidationException"
    eks.create_cluster(name="cm", roleArn=ROLE, resourcesVpcConfig={"subnetIds": [SUBNET]})
    with pytest.raises(ClientError) as creating:
        sm.create_cluster(**spec, Orchestrator={"Eks": {"ClusterArn": arn + "cm"}})
    assert "ACTIVE" in creating.value.response["Error"]["Message"]
    box.advance(700)
    with pytest.raises(ClientError) as config_map:
        sm.create_cluster(**spec, Orchestrator={"Eks": {"ClusterArn": arn + "cm"}})
    assert "API_AND_CONFIG_MAP" in config_map.value.response["Error"]["Message"]
    assert sm.list_clusters()["ClusterSummaries"] == []


def test_tags_on_emulated_clusters(box: Box) -> None:
    sm = box.client("sagemaker")
    arn = hyperpod_cluster(box, "hp1", [group("w", "ml.m5.xlarge", 1)],
                           Tags=[{"Key": "managed-by", "Value": "podplane"}])
    assert sm.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "managed-by", "Value": "podplane"}]
    sm.add_tags(ResourceArn=arn, Tags=[{"Key": "team", "Value": "a"},
                                       {"Key": "managed-by", "Value": "podplane-2"}])
    sm.delete_tags(ResourceArn=arn, TagKeys=["team"])
    assert sm.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "managed-by",
                                                      "Value": "podplane-2"}]
    assert [e["action"] for e in box.ledger(service="sagemaker")] == [
        "CreateCluster", "AddTags", "DeleteTags"]


def test_unknown_instance_type_is_a_validation_error(box: Box) -> None:
    with pytest.raises(ClientError) as err:
        hyperpod_cluster(box, "hp1", [group("w", "ml.p99.48xlarge", 1)])
    assert err.value.response["Error"]["Code"] == "ValidationException"
    assert "ml.p99.48xlarge" in err.value.response["Error"]["Message"]
