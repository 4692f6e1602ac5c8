"""The sandbox's ListClusterEvents / DescribeClusterEvent as botocore's sagemaker model shapes
them (every response is checked against the model by the box's ShapeRecorder): the events
HyperPod records for a node's failed health check and its reboot, a cluster's status change,
newest first by default, paged, and refused with a ValidationException for bad input."""

from __future__ import annotations

import re

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import Box, box, group, hyperpod_cluster, network

__all__ = ["box"]  # the fixture, imported for pytest
UUID = re.compile(r"^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$")


def _cluster(box: Box) -> str:
    subnet, sg = network(box)
    hyperpod_cluster(box, "ev", [group("gpu", "ml.g5.8xlarge", 2)], subnet, sg,
                     NodeProvisioningMode="Continuous")
    box.advance(1200)
    nodes = box.client("sagemaker").list_cluster_nodes(ClusterName="ev")["ClusterNodeSummaries"]
    return str(nodes[0]["InstanceId"])


def test_a_node_health_fault_and_its_reboot_are_cluster_events(box: Box) -> None:
    sm = box.client("sagemaker")
    iid = _cluster(box)
    box.control("POST", "/faults", json={"kind": "node_unhealthy", "cluster": "ev",
                                         "instance_id": iid, "action": "reboot",
                                         "reason": "NvidiaErrorReboot:XidHardwareFailure"})
    box.advance(5)
    sm.batch_reboot_cluster_nodes(ClusterName="ev", NodeIds=[iid])
    mine = sm.list_cluster_events(ClusterName="ev", NodeId=iid)["Events"]
    assert [(e["EventLevel"], e["ResourceType"]) for e in mine[:2]] == [
        ("Info", "Instance"), ("Warn", "Instance")]  # newest first
    rebooted, flagged = mine[0], mine[1]
    assert "rebooted" in rebooted["Description"] and rebooted["InstanceId"] == iid
    assert "NvidiaErrorReboot:XidHardwareFailure" in flagged["Description"]
    assert flagged["InstanceGroupName"] == "gpu" and UUID.match(flagged["EventId"])
    assert not any(k.startswith("_") for e in mine for k in e)
    detail = sm.describe_cluster_event(ClusterName="ev", EventId=flagged["EventId"])[
        "EventDetails"]
    assert detail["EventDetails"]["EventMetadata"]["Instance"]["FailureMessage"] == \
        "NvidiaErrorReboot:XidHardwareFailure"

    whole = sm.list_cluster_events(ClusterName="ev", SortOrder="Ascending")["Events"]
    assert whole[0]["Description"] == "Cluster creation started."
    assert any(e["ResourceType"] == "Cluster" and "to InService" in e["Description"]
               for e in whole)
    times = [e["EventTime"] for e in whole]
    assert times == sorted(times)
    first = sm.list_cluster_events(ClusterName="ev", MaxResults=2, SortOrder="Ascending")
    second = sm.list_cluster_events(ClusterName="ev", MaxResults=2, SortOrder="Ascending",
                                    NextToken=first["NextToken"])
    assert [e["EventId"] for e in first["Events"] + second["Events"]] == \
        [e["EventId"] for e in whole[:4]]
    only = sm.list_cluster_events(ClusterName="ev", ResourceType="Cluster")["Events"]
    assert only and {e["ResourceType"] for e in only} == {"Cluster"}


BAD = [({"MaxResults": 0}, "maxResults"), ({"MaxResults": 101}, "maxResults"),
       ({"ResourceType": "Node"}, "resourceType"), ({"SortOrder": "Newest"}, "sortOrder"),
       ({"NodeId": "node-1"}, "nodeId"), ({"NextToken": "not-a-token"}, "not valid")]


def test_bad_input_unknown_events_and_on_demand_clusters_are_refused(box: Box) -> None:
    _cluster(box)
    sm = box.client("sagemaker")
    unchecked = boto3.client(  # boto3 checks the model itself; the service must check too
        "sagemaker", endpoint_url=box.url, region_name="us-west-2", aws_access_key_id="test",
        aws_secret_access_key="test", config=Config(parameter_validation=False))
    for params, said in BAD:
        with pytest.raises(ClientError) as err:
            unchecked.list_cluster_events(ClusterName="ev", **params)
        assert err.value.response["Error"]["Code"] == "ValidationException", params
        assert said in err.value.response["Error"]["Message"], params
    with pytest.raises(ClientError) as err:
        sm.describe_cluster_event(ClusterName="ev",
                                  EventId="00000000-0000-0000-0000-000000000000")
    assert err.value.response["Error"]["Code"] == "ResourceNotFound"
    with pytest.raises(ClientError) as err:
        sm.list_cluster_events(ClusterName="nope")
    assert err.value.response["Error"]["Code"] == "ResourceNotFound"
    subnet, sg = network(box, az="us-west-2b")
    hyperpod_cluster(box, "od", [group("gpu", "ml.g5.8xlarge", 1)], subnet, sg)
    with pytest.raises(ClientError) as err:  # only continuous provisioning has events
        sm.list_cluster_events(ClusterName="od")
    assert err.value.response["Error"]["Code"] == "ValidationException"
