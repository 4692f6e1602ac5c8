"""HyperPodPort over boto3 (SageMaker cluster APIs); `domain.cloud_errors` reads failures."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


class HyperPodAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def _call(self, operation: str, **params: Any) -> Shape:
        return await self.aws.call("sagemaker", operation, **params)

    async def create_cluster(self, spec: Shape) -> str:
        return str((await self._call("create_cluster", **spec))["ClusterArn"])

    async def describe_cluster(self, name: str) -> Shape | None:
        return await self.aws.maybe("sagemaker", "describe_cluster", ClusterName=name)

    async def list_clusters(self) -> list[Shape]:
        out: list[Shape] = []
        token: str | None = None
        while True:
            page = await self._call("list_clusters", **({"NextToken": token} if token else {}))
            out.extend(page["ClusterSummaries"])
            token = page.get("NextToken")
            if not token:
                return out

    async def update_cluster(self, spec: Shape) -> str:
        return str((await self._call("update_cluster", **spec))["ClusterArn"])

    async def update_cluster_software(self, name: str, **extra: Any) -> str:
        return str((await self._call("update_cluster_software", ClusterName=name,
                                     **extra))["ClusterArn"])

    async def delete_cluster(self, name: str) -> str:
        return str((await self._call("delete_cluster", ClusterName=name))["ClusterArn"])

    async def list_cluster_nodes(self, name: str) -> list[Shape]:
        out: list[Shape] = []
        token: str | None = None
        while True:
            page = await self._call("list_cluster_nodes", ClusterName=name,
                                    **({"NextToken": token} if token else {}))
            out.extend(page["ClusterNodeSummaries"])
            token = page.get("NextToken")
            if not token:
                return out

    async def describe_cluster_node(self, name: str, node_id: str) -> Shape:
        found = await self._call("describe_cluster_node", ClusterName=name, NodeId=node_id)
        return dict(found["NodeDetails"])

    async def reboot_nodes(self, name: str, node_ids: list[str]) -> Shape:
        return await self._call("batch_reboot_cluster_nodes", ClusterName=name, NodeIds=node_ids)

    async def replace_nodes(self, name: str, node_ids: list[str]) -> Shape:
        return await self._call("batch_replace_cluster_nodes", ClusterName=name,
                                NodeIds=node_ids)

    async def delete_nodes(self, name: str, node_ids: list[str]) -> Shape:
        return await self._call("batch_delete_cluster_nodes", ClusterName=name, NodeIds=node_ids)

    async def search_training_plan_offerings(self, instance_type: str, count: int,
                                             duration_hours: int) -> list[Shape]:
        return list((await self._call("search_training_plan_offerings",
                                      InstanceType=instance_type, InstanceCount=count,
                                      DurationHours=duration_hours,
                                      TargetResources=["hyperpod-cluster"])
                     )["TrainingPlanOfferings"])

    async def create_training_plan(self, name: str, offering_id: str) -> str:
        return str((await self._call("create_training_plan", TrainingPlanName=name,
                                     TrainingPlanOfferingId=offering_id))["TrainingPlanArn"])

    async def list_training_plans(self) -> list[Shape]:
        out: list[Shape] = []
        token: str | None = None
        while True:
            page = await self._call("list_training_plans",
                                    **({"NextToken": token} if token else {}))
            out.extend(page["TrainingPlanSummaries"])
            token = page.get("NextToken")
            if not token:
                return out

    async def latest_group_event(self, name: str, group: str) -> Shape | None:
        """The newest ListClusterEvents entry about an instance group (continuous
        provisioning reports its progress and failures only there)."""
        page = await self._call("list_cluster_events", ClusterName=name,
                                InstanceGroupName=group, SortBy="EventTime",
                                SortOrder="Descending", MaxResults=1)
        events = page.get("Events") or []
        return dict(events[0]) if events else None

    async def list_cluster_events(self, name: str, node_id: str | None = None,
                                  limit: int = 20) -> list[Shape]:
        """The newest `limit` ListClusterEvents entries, of one instance when `node_id` is
        given. botocore: "only supported when the NodeProvisioningMode is set to Continuous";
        other clusters answer ValidationException, so callers ask continuous clusters only."""
        out: list[Shape] = []
        token: str | None = None
        while len(out) < limit:
            page = await self._call(
                "list_cluster_events", ClusterName=name, SortBy="EventTime",
                SortOrder="Descending", MaxResults=min(100, limit - len(out)),
                **({"NodeId": node_id} if node_id else {}),
                **({"NextToken": token} if token else {}))
            out.extend(dict(e) for e in page.get("Events") or [])
            token = page.get("NextToken")
            if not token:
                break
        return out[:limit]

    async def list_tags(self, arn: str) -> list[Shape]:
        listed = await self._call("list_tags", ResourceArn=arn)
        return list(listed.get("Tags", []))
