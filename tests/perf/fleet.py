"""A large fake fleet (HyperPod nodes, Kubernetes Nodes, GPU pods) on the in-memory port fakes,
with counters of the cloud reads each port answered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from podplane.services.cloud_access import Cloud
from podplane.services.groups.steps import CLUSTER_LABEL, HEALTH_LABEL
from podplane.services.observe import ObservationCache, observed
from tests.fakes.cloud import Fakes
from tests.fakes.hyperpod import FakeHyperPod
from tests.fakes.kube import FakeKube, FakeKubeConnector

CLUSTER = "big"
GROUPS = ("train-a", "train-b", "infer")
Shape = dict[str, Any]


class CountingHyperPod(FakeHyperPod):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def describe_cluster(self, name: str) -> Shape | None:
        self.reads += 1
        return await super().describe_cluster(name)

    async def list_cluster_nodes(self, name: str) -> list[Shape]:
        self.reads += 1
        return await super().list_cluster_nodes(name)


class CountingKube(FakeKube):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def list(self, api_version: str, kind: str, **kw: Any) -> list[Shape]:
        self.reads += 1
        return await super().list(api_version, kind, **kw)


def iid(i: int) -> str:
    return f"i-{i:017x}"


def kind_of(i: int) -> str:
    """Every 10th node waits for a reboot, every 25th has not registered in Kubernetes."""
    if i % 25 == 0:
        return "unregistered"
    return "reboot" if i % 10 == 0 else "healthy"


def build(count: int) -> tuple[Fakes, CountingHyperPod, CountingKube]:
    hp, kube = CountingHyperPod(), CountingKube()
    hp.clusters[CLUSTER] = {"ClusterName": CLUSTER, "ClusterStatus": "InService",
                            "NodeRecovery": "None", "InstanceGroups": []}
    launched = datetime(2026, 11, 1, tzinfo=UTC)
    hp.nodes[CLUSTER] = [
        {"InstanceId": iid(i), "InstanceGroupName": GROUPS[i % 3],
         "InstanceType": "ml.p5.48xlarge", "LaunchTime": launched + timedelta(seconds=i),
         "InstanceStatus": {"Status": "Running", "Message": ""}}
        for i in range(count)]
    for i in range(count):
        if kind_of(i) == "unregistered":
            continue
        health = "UnschedulablePendingReboot" if kind_of(i) == "reboot" else "Schedulable"
        kube.add({"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": f"hyperpod-{iid(i)}", "labels": {CLUSTER_LABEL: CLUSTER, HEALTH_LABEL: health}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "capacity": {"nvidia.com/gpu": "8"},
                       "allocatable": {"nvidia.com/gpu": "8"}}})
        kube.add({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"job-{i}", "namespace": "default"},
            "spec": {"nodeName": f"hyperpod-{iid(i)}", "containers": [
                {"name": "main", "resources": {"requests": {"nvidia.com/gpu": str(i % 9)}}}]},
            "status": {"phase": "Running"}})
    fakes = Fakes(hyperpod=hp, kube=FakeKubeConnector())
    fakes.kube.clusters[CLUSTER] = kube
    return fakes, hp, kube


def observed_cloud(fakes: Fakes, cache: ObservationCache) -> Cloud:
    return observed(fakes.cloud(), cache)
