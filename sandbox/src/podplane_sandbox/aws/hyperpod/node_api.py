"""HyperPod node API: list / describe, batch reboot / replace / delete, software updates, and
the `NodeSource` view the Kubernetes side builds Node objects from."""

from __future__ import annotations

from typing import Any, cast

from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.errors import sm_not_found
from podplane_sandbox.aws.hyperpod.nodes import (
    SHUTDOWN_SECONDS,
    SOFTWARE_SECONDS,
    NodesMixin,
)
from podplane_sandbox.aws.world import AZ_IDS
from podplane_sandbox.contracts import SandboxNode


class NodeApiMixin(NodesMixin):
    # API -----------------------------------------------------------------------------------
    def list_cluster_nodes(self, p: dict[str, Any]) -> dict[str, Any]:
        cluster = self.get_cluster(p["ClusterName"])
        nodes = [n for n in self.nodes(cluster["ClusterName"]).values()
                 if p.get("InstanceGroupNameContains", "") in n["InstanceGroupName"]]
        nodes.sort(key=lambda n: (n["LaunchTime"], n["InstanceId"]),
                   reverse=p.get("SortOrder") == "Descending")
        summaries = [_summary(n, self.w.region) for n in nodes]
        page, nxt = paginate(summaries, p, "MaxResults", "NextToken")
        return {"ClusterNodeSummaries": page, **({"NextToken": nxt} if nxt else {})}

    def describe_cluster_node(self, p: dict[str, Any]) -> dict[str, Any]:
        cluster = self.get_cluster(p["ClusterName"])
        node = self._find_node(cluster, p.get("NodeId"), p.get("NodeLogicalId"))
        if node is None:
            raise sm_not_found(f"Node {p.get('NodeId') or p.get('NodeLogicalId')} not found "
                               f"in cluster {cluster['ClusterArn']}")
        group = self.group(cluster, node["InstanceGroupName"])
        detail = {**_summary(node, self.w.region),
                  "LifeCycleConfig": group.get("LifeCycleConfig"),
                  "ThreadsPerCore": group.get("ThreadsPerCore"),
                  "PrivatePrimaryIp": node["_ip"],
                  "Placement": {"AvailabilityZone": node["_az"],
                                "AvailabilityZoneId": AZ_IDS[node["_az"]]},
                  "CapacityType": "Spot" if node["_capacity"] == "spot" else "OnDemand"}
        for key in ("InstanceStorageConfigs", "OverrideVpcConfig", "NetworkInterface"):
            if group.get(key):
                detail[key] = group[key]
        return {"NodeDetails": {k: v for k, v in detail.items() if v is not None}}

    def batch_reboot_cluster_nodes(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._batch(p, "BatchRebootClusterNodes", "reboot")

    def batch_replace_cluster_nodes(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._batch(p, "BatchReplaceClusterNodes", "replace")

    def batch_delete_cluster_nodes(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._batch(p, "BatchDeleteClusterNodes", "delete")

    def _batch(self, p: dict[str, Any], action: str, what: str) -> dict[str, Any]:
        cluster = self.get_cluster(p["ClusterName"])
        ok: list[str] = []
        failed: list[dict[str, str]] = []
        now = self.w.now()
        for iid in p.get("NodeIds", []):
            node = self.nodes(cluster["ClusterName"]).get(iid)
            if node is None:
                failed.append(_failure(what, iid, "NotFound", f"Node {iid} not found"))
            elif node["Status"] not in ("Running",) and what != "delete":
                failed.append(_failure(what, iid, "InvalidStatus",
                                       f"Node {iid} is {node['Status']}"))
            else:
                ok.append(iid)
                if what == "delete":
                    node.update(Status="ShuttingDown", _until=now + SHUTDOWN_SECONDS)
                    group = self.group(cluster, node["InstanceGroupName"])
                    group["TargetCount"] = max(0, group["TargetCount"] - 1)
                    group["_spec"]["InstanceCount"] = group["TargetCount"]
                else:
                    self._recover(cluster, node, what, now)
        if ok:
            self.w.record("sagemaker", action, cluster["ClusterName"], node_ids=ok)
        out: dict[str, Any] = {"Successful": ok, "Failed": failed}
        return out

    def update_cluster_software(self, p: dict[str, Any]) -> dict[str, Any]:
        cluster = self.get_cluster(p["ClusterName"])
        self.require_in_service(cluster)
        names = {g["InstanceGroupName"] for g in p.get("InstanceGroups", [])}
        now = self.w.now()
        for n in self.nodes(cluster["ClusterName"]).values():
            if n["Status"] == "Running" and (not names or n["InstanceGroupName"] in names):
                n.update(Status="SystemUpdating", _until=now + SOFTWARE_SECONDS)
        cluster["ClusterStatus"] = "SystemUpdating"
        self.w.record("sagemaker", "UpdateClusterSoftware", cluster["ClusterName"])
        return {"ClusterArn": cluster["ClusterArn"]}

    def _find_node(self, cluster: dict[str, Any], iid: str | None,
                   logical: str | None) -> dict[str, Any] | None:
        for n in self.nodes(cluster["ClusterName"]).values():
            if n["InstanceId"] == iid or (logical and n["NodeLogicalId"] == logical):
                return cast("dict[str, Any]", n)
        return None

    # NodeSource --------------------------------------------------------------------------
    def sandbox_nodes(self, eks_cluster_name: str | None = None) -> list[SandboxNode]:
        self.w.tick()
        out = []
        with self.w.lock:
            for cluster in self.table("clusters").values():
                eks = cluster.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn", "")
                eks_name = eks.rsplit("/", 1)[-1]
                if eks_cluster_name and eks_name != eks_cluster_name:
                    continue
                for n in self.nodes(cluster["ClusterName"]).values():
                    out.append(_sandbox_node(cluster, eks_name, n))
        return out


def _sandbox_node(cluster: dict[str, Any], eks_name: str, n: dict[str, Any]) -> SandboxNode:
    return SandboxNode(
        cluster_name=cluster["ClusterName"], eks_cluster_name=eks_name,
        group_name=n["InstanceGroupName"], instance_id=n["InstanceId"],
        instance_type=n["InstanceType"], availability_zone=n["_az"], status=n["Status"],
        capacity_type=n["_capacity"], health=n["_health"], fault_reason=n.get("_reason"),
        labels={"sagemaker.amazonaws.com/compute-type": "hyperpod"},
        cluster_id=cluster["ClusterArn"].rsplit("/", 1)[-1],
        availability_zone_id=AZ_IDS.get(n["_az"], ""),
        efa_link_factor=float(n.get("_efa_factor", 1.0)))


def _summary(n: dict[str, Any], region: str) -> dict[str, Any]:
    out = {k: n[k] for k in ("InstanceGroupName", "InstanceId", "NodeLogicalId", "InstanceType",
                             "LaunchTime")}
    out["InstanceStatus"] = {"Status": n["Status"], "Message": n.get("Message", "")}
    if n.get("LastSoftwareUpdateTime"):
        out["LastSoftwareUpdateTime"] = n["LastSoftwareUpdateTime"]
    out["PrivateDnsHostname"] = f"ip-{n['_ip'].replace('.', '-')}.{region}.compute.internal"
    return out


def _failure(what: str, iid: str, kind: str, message: str) -> dict[str, str]:
    if what == "delete":
        code = {"NotFound": "NodeIdNotFound", "InvalidStatus": "InvalidNodeStatus"}[kind]
        return {"Code": code, "Message": message, "NodeId": iid}
    code = {"NotFound": "InstanceIdNotFound", "InvalidStatus": "InvalidInstanceStatus"}[kind]
    return {"NodeId": iid, "ErrorCode": code, "Message": message}
