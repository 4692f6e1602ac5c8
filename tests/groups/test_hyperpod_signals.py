"""Instance groups against HyperPod's real rules and signals: deep health checks only where
HyperPod defines them, UpdateCluster keeping what AWS returns, and a continuous-provisioning
shortfall read from the cluster's events."""

from __future__ import annotations

from typing import Any

from tests.groups.conftest import FIRST_GROUP, FIRST_TYPE, LIFECYCLE, ROLE, Cluster, finish

BASE = "/api/v1/clusters/gpu/instance-groups"
TAINT = {"Key": "dedicated", "Value": "training", "Effect": "NoSchedule"}


def _first_group(**extra: Any) -> dict[str, Any]:
    return {"InstanceGroupName": FIRST_GROUP, "InstanceType": FIRST_TYPE, "InstanceCount": 1,
            "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE, "ThreadsPerCore": 1,
            "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}], **extra}


def _update(cluster: Cluster, **request: Any) -> None:
    """Change the cluster outside podplane (as a console user would), then let it settle."""
    cluster.stack.aws("sagemaker").update_cluster(ClusterName=cluster.name, **request)
    cluster.stack.advance(60)


async def test_a_cpu_group_gets_no_deep_health_checks_and_is_accepted(cluster: Cluster) -> None:
    _update(cluster, InstanceGroups=[_first_group(
        OnStartDeepHealthChecks=["InstanceStress", "InstanceConnectivity"])])
    async with cluster.stack.client("operator") as api:
        r = await api.post(BASE, json={"name": "cpu", "instance_type": "ml.m5.xlarge",
                                       "count": 1})
        assert r.status_code == 202, r.text
        done = await finish(api, r.json())
    assert done["status"] == "succeeded", done
    groups = {g["InstanceGroupName"]: g for g in cluster.describe()["InstanceGroups"]}
    assert "OnStartDeepHealthChecks" not in groups["cpu"]  # HyperPod refuses them on CPUs
    assert groups["cpu"]["CurrentCount"] == 1
    assert groups[FIRST_GROUP]["OnStartDeepHealthChecks"] == [
        "InstanceStress", "InstanceConnectivity"]


async def test_scale_keeps_labels_taints_and_min_count_and_sends_no_image_id(
    cluster: Cluster,
) -> None:
    _update(cluster, InstanceGroups=[_first_group(
        MinInstanceCount=1, KubernetesConfig={"Labels": {"team": "vision"}, "Taints": [TAINT]})])
    before = cluster.describe()["InstanceGroups"][0]
    assert before["CurrentImageId"].startswith("ami-")  # what AWS returns for each group
    async with cluster.stack.client("operator") as api:
        r = await api.patch(f"{BASE}/{FIRST_GROUP}", json={"count": 2})
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
    after = cluster.describe()["InstanceGroups"][0]
    assert after["TargetCount"] == 2 and after["MinCount"] == 1
    assert after["KubernetesConfig"]["CurrentLabels"] == {"team": "vision"}
    assert after["KubernetesConfig"]["CurrentTaints"] == [TAINT]
    # the request as AWS recorded it (CloudTrail's view): no group pinned to an AMI
    assert cluster.updates()[-1]["params"]["image_ids"] == {}


async def test_a_continuous_shortfall_fails_the_add_from_the_cluster_events(
    cluster: Cluster,
) -> None:
    stack = cluster.stack
    _update(cluster, NodeProvisioningMode="Continuous")
    stack.fault(kind="insufficient_capacity", instance_type="ml.g5.xlarge",
                availability_zone="us-west-2a")
    async with stack.client("operator") as api:
        r = await api.post(BASE, json={"name": "short", "instance_type": "ml.g5.xlarge",
                                       "count": 2})
        assert r.status_code == 202, r.text
        done = await finish(api, r.json())
    assert done["status"] == "failed"
    wait = next(s for s in done["steps"] if s["name"] == "wait-nodes")
    assert wait["error"]["code"] == "insufficient_capacity"
    described = cluster.describe()
    assert described["ClusterStatus"] == "InService" and "FailureMessage" not in described
    events = stack.aws("sagemaker").list_cluster_events(
        ClusterName=cluster.name, InstanceGroupName="short")["Events"]
    assert [e["EventLevel"] for e in events] == ["Error"]
