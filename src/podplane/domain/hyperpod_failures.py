"""HyperPod's own failure reports as classified errors: a Failed cluster's FailureMessage
(DescribeCluster), a Degraded/Failed group, and an ERROR event about a group
(ListClusterEvents; continuous provisioning reports only there). Capacity is told apart by its
message ("We currently do not have sufficient capacity ...", InsufficientCapacity)."""

from __future__ import annotations

from typing import Any

from podplane.domain.cloud_errors import capacity_error, classify
from podplane.domain.errors import CloudError


def _no_capacity(message: str) -> bool:
    return "sufficient capacity" in message or "InsufficientCapacity" in message


def cluster_failure(cluster: dict[str, Any]) -> CloudError | None:
    """A Failed cluster's FailureMessage (DescribeCluster) as a classified error."""
    if cluster.get("ClusterStatus") != "Failed":
        return None
    message = str(cluster.get("FailureMessage", "cluster creation failed"))
    if _no_capacity(message):
        return capacity_error(f"sagemaker.create_cluster: {message}", message)
    return CloudError(message, code="cluster_failed", retryable=False,
                      hint="See the FailureMessage; lifecycle-script logs are in CloudWatch "
                      "under /aws/sagemaker/Clusters.")


def group_event_failure(event: dict[str, Any] | None) -> CloudError | None:
    """An ERROR-level cluster event (ListClusterEvents) about a group, classified."""
    if event is None or event.get("EventLevel") != "Error":
        return None
    message = str(event.get("Description") or "instance provisioning failed")
    text = f"sagemaker.list_cluster_events: instance group {event.get('InstanceGroupName')}: " \
           f"{message}"
    if _no_capacity(message):
        return capacity_error(text, message)
    return CloudError(text, code="instance_group_failed", retryable=True,
                      hint="HyperPod keeps retrying; see the cluster's events "
                      "(aws sagemaker list-cluster-events) for the cause.")


def group_failure(described: dict[str, Any], group: dict[str, Any] | None) -> CloudError | None:
    """A group HyperPod could not bring up: Degraded/Failed with the cluster's message."""
    if group is None or group.get("Status") not in ("Degraded", "Failed"):
        return None
    message = str(described.get("FailureMessage") or f"instance group is {group['Status']}")
    err = classify("InsufficientCapacity" if "sufficient capacity" in message
                   else "GroupFailed", message, "sagemaker.update_cluster")
    if err.code == "cloud_error":
        err.code = "instance_group_failed"
    return err
