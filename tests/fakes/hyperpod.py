"""HyperPodPort in memory: clusters as DescribeCluster shows them, nodes, events and tags."""

from __future__ import annotations

from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]


class FakeHyperPod(FakePort):
    service = "sagemaker"

    def __init__(self) -> None:
        super().__init__()
        self.clusters: dict[str, Shape] = {}
        self.nodes: dict[str, list[Shape]] = {}
        self.events: dict[tuple[str, str], Shape] = {}
        self.cluster_events: dict[str, list[Shape]] = {}  # ListClusterEvents, any order
        self.tags: dict[str, list[Shape]] = {}
        self.plans: list[Shape] = []
        self.created_status = "Creating"  # what a new cluster reports first
        # After this many DescribeCluster calls a Creating cluster is InService with every
        # group filled (None: it stays as it is).
        self.ready_after: int | None = None

    def _arn(self, name: str) -> str:
        return f"arn:aws:sagemaker:us-west-2:111122223333:cluster/{name}"

    async def create_cluster(self, spec: Shape) -> str:
        self._enter("create_cluster", **spec)
        name = spec["ClusterName"]
        groups = [{**g, "TargetCount": g["InstanceCount"], "CurrentCount": 0}
                  for g in spec.get("InstanceGroups", [])]
        self.clusters[name] = {**spec, "ClusterArn": self._arn(name), "InstanceGroups": groups,
                               "ClusterStatus": self.created_status}
        self.tags[self._arn(name)] = list(spec.get("Tags", []))
        return self._arn(name)

    async def describe_cluster(self, name: str) -> Shape | None:
        self._enter("describe_cluster", name=name)
        found = self.clusters.get(name)
        if found is None:
            return None
        if self.ready_after is not None and found["ClusterStatus"] == "Creating":
            self.ready_after -= 1
            if self.ready_after <= 0:
                found["ClusterStatus"] = "InService"
                for group in found["InstanceGroups"]:
                    group["CurrentCount"] = group["TargetCount"]
        return dict(found)

    async def list_clusters(self) -> list[Shape]:
        return [{"ClusterName": n, "ClusterArn": c["ClusterArn"],
                 "ClusterStatus": c["ClusterStatus"]} for n, c in self.clusters.items()]

    async def update_cluster(self, spec: Shape) -> str:
        self._enter("update_cluster", **spec)
        return self._arn(spec["ClusterName"])

    async def update_cluster_software(self, name: str, **extra: Any) -> str:
        self._enter("update_cluster_software", name=name, **extra)
        return self._arn(name)

    async def delete_cluster(self, name: str) -> str:
        self._enter("delete_cluster", name=name)
        self.clusters.pop(name, None)  # gone at once: the fake has no Deleting phase
        return self._arn(name)

    async def list_cluster_nodes(self, name: str) -> list[Shape]:
        return [dict(n) for n in self.nodes.get(name, [])]

    async def describe_cluster_node(self, name: str, node_id: str) -> Shape:
        for node in self.nodes.get(name, []):
            if node["InstanceId"] == node_id:
                return dict(node)
        raise self.refuse("describe_cluster_node", "ResourceNotFound", node_id)

    async def _batch(self, operation: str, name: str, node_ids: list[str]) -> Shape:
        self._enter(operation, name=name, node_ids=node_ids)
        return {"Successful": list(node_ids), "Failed": []}

    async def reboot_nodes(self, name: str, node_ids: list[str]) -> Shape:
        return await self._batch("batch_reboot_cluster_nodes", name, node_ids)

    async def replace_nodes(self, name: str, node_ids: list[str]) -> Shape:
        return await self._batch("batch_replace_cluster_nodes", name, node_ids)

    async def delete_nodes(self, name: str, node_ids: list[str]) -> Shape:
        return await self._batch("batch_delete_cluster_nodes", name, node_ids)

    async def search_training_plan_offerings(self, instance_type: str, count: int,
                                             duration_hours: int) -> list[Shape]:
        return []

    async def create_training_plan(self, name: str, offering_id: str) -> str:
        self._enter("create_training_plan", name=name, offering_id=offering_id)
        return f"arn:aws:sagemaker:us-west-2:111122223333:training-plan/{name}"

    async def list_training_plans(self) -> list[Shape]:
        return [dict(p) for p in self.plans]

    async def latest_group_event(self, name: str, group: str) -> Shape | None:
        return self.events.get((name, group))

    async def list_cluster_events(self, name: str, node_id: str | None = None,
                                  limit: int = 20) -> list[Shape]:
        found = [dict(e) for e in self.cluster_events.get(name, [])
                 if node_id is None or e.get("InstanceId") == node_id]
        return sorted(found, key=lambda e: e["EventTime"], reverse=True)[:limit]

    async def list_tags(self, arn: str) -> list[Shape]:
        return list(self.tags.get(arn, []))
