"""HyperPod nodes: placement, Pending -> Running, reboot / replace / delete, software updates."""

from __future__ import annotations

from typing import Any, cast

from podplane_sandbox.aws.base import Emulator
from podplane_sandbox.aws.errors import sm_conflict, sm_not_found, sm_validation
from podplane_sandbox.aws.hyperpod.capacity import Capacity
from podplane_sandbox.aws.node_network import check_bootstrap
from podplane_sandbox.aws.world import AZS

LAUNCH_SECONDS = 480.0        # Pending -> Running (+ seeded jitter up to 120 s)
DEEP_HEALTH_SECONDS = 3600.0  # on-start deep health checks (AWS: about 60-90 minutes)
REBOOT_SECONDS = 180.0
SHUTDOWN_SECONDS = 120.0
SOFTWARE_SECONDS = 600.0
AUTO_RECOVERY_SECONDS = 300.0


class NoCapacity(Exception):
    def __init__(self, instance_type: str, azs: list[str]) -> None:
        self.instance_type, self.azs = instance_type, azs
        # AWS's words, and only them: AWS does not say where capacity would be
        self.message = ("We currently do not have sufficient capacity for the requested "
                        "instance type(s). Please try again.")
        Exception.__init__(self, self.message)


class NodesMixin(Emulator):
    def get_cluster(self, name_or_arn: str) -> dict[str, Any]:
        name = name_or_arn.rsplit("/", 1)[-1]
        cluster = self.table("clusters").get(name)
        if cluster is None:
            raise sm_not_found(f"Cluster {name_or_arn} not found")
        return cast("dict[str, Any]", cluster)

    def group(self, cluster: dict[str, Any], name: str) -> dict[str, Any]:
        for g in cluster["InstanceGroups"]:
            if g["InstanceGroupName"] == name:
                return cast("dict[str, Any]", g)
        raise sm_validation(f"Instance group {name} not found in cluster "
                            f"{cluster['ClusterName']}")

    def require_in_service(self, cluster: dict[str, Any]) -> None:
        if cluster["ClusterStatus"] != "InService":
            raise sm_conflict(f"Cluster {cluster['ClusterName']} is in "
                              f"{cluster['ClusterStatus']} status; retry when it is InService.")

    def event(self, cluster: dict[str, Any], level: str, description: str,
              group: str | None = None, instance: str | None = None,
              at: float | None = None, failure: str | None = None) -> None:
        """Recorded for ListClusterEvents by EventsMixin (hyperpod/events.py)."""

    @property
    def cap(self) -> Capacity:
        return Capacity(self.w.service_state("capacity"))

    def nodes(self, cluster: str) -> dict[str, Any]:
        return cast("dict[str, Any]", self.table("nodes").setdefault(cluster, {}))

    def used(self, instance_type: str) -> dict[str, int]:
        """Instances per AZ of a type, outside training plans (plans bring their own capacity)."""
        out: dict[str, int] = {}
        for nodes in self.table("nodes").values():
            for n in nodes.values():
                if n["InstanceType"] == instance_type and not n.get("_plan"):
                    out[n["_az"]] = out.get(n["_az"], 0) + 1
        return out

    def group_azs(self, cluster: dict[str, Any], group: dict[str, Any]) -> list[str]:
        vpc = group.get("OverrideVpcConfig") or cluster.get("VpcConfig") or {}
        azs = [self.w.subnet_azs(s) if self.w.subnet_azs else None
               for s in vpc.get("Subnets", [])]
        found = [az for az in azs if az]
        # unknown subnets were refused by CreateCluster / UpdateCluster (rules.py); only a
        # cluster without any VPC configuration is placed in any AZ
        return sorted(set(found)) if vpc.get("Subnets") else list(AZS)

    def place(self, cluster: dict[str, Any], group: dict[str, Any]) -> str:
        itype = group["InstanceType"]
        plan = group.get("_plan_az")
        if plan:
            return str(plan)
        azs = self.group_azs(cluster, group)
        used = self.used(itype)
        for az in azs:
            free = self.cap.capacity(itype, az) - used.get(az, 0)
            if free > 0 and not self.w.faults.fire("insufficient_capacity", instance_type=itype,
                                                   availability_zone=az):
                return az
        raise NoCapacity(itype, azs)

    def launch(self, cluster: dict[str, Any], group: dict[str, Any], az: str,
               logical_id: str | None = None, at: float | None = None) -> dict[str, Any]:
        now = self.w.now() if at is None else at
        iid = self.w.instance_id()
        deep = bool(group.get("OnStartDeepHealthChecks"))
        node = {"InstanceGroupName": group["InstanceGroupName"], "InstanceId": iid,
                "NodeLogicalId": logical_id or self.w.hex_id(8) + "-" + self.w.hex_id(4),
                "InstanceType": group["InstanceType"], "LaunchTime": now,
                "Status": "Pending", "Message": "", "_az": az, "_deep": deep,
                "_until": now + LAUNCH_SECONDS + self.w.rng.uniform(0, 120),
                "_ip": f"10.1.{self.w.rng.randint(0, 255)}.{self.w.rng.randint(2, 254)}",
                "_plan": group.get("TrainingPlanArn"), "_health": "Unschedulable",
                "_capacity": _capacity_type(group)}
        self.nodes(cluster["ClusterName"])[iid] = node
        check_bootstrap(self.w, cluster, group, node)  # the network decides (issue 19)
        return node

    # lifecycle -----------------------------------------------------------------------------
    def tick_nodes(self, cluster: dict[str, Any], now: float) -> None:
        """Apply due node events in time order, each at its own deadline, so one big clock
        step gives the same result as many small ones."""
        nodes = self.nodes(cluster["ClusterName"])
        while True:
            due = sorted((at, iid) for iid, n in nodes.items()
                         if (at := _next_event(n)) is not None and at <= now)
            if not due:
                return
            for at, iid in due:  # one step per node per pass; chained steps take more passes
                n = nodes.get(iid)
                if n is None or _next_event(n) != at:
                    continue
                if n.get("_auto_at") == at:
                    n.pop("_auto_at")
                    self._recover(cluster, n, n.pop("_auto_action"), at)
                else:
                    self._advance_node(cluster, nodes, iid, n, at)

    def _advance_node(self, cluster: dict[str, Any], nodes: dict[str, Any], iid: str,
                      n: dict[str, Any], now: float) -> None:
        status, n["_until"] = n["Status"], None
        if status == "Pending" and n.pop("_deep", False):
            n.update(Status="DeepHealthCheckInProgress", _until=now + DEEP_HEALTH_SECONDS)
        elif status in ("Pending", "DeepHealthCheckInProgress", "SystemUpdating"):
            n.update(Status="Running", Message="", _health="Schedulable", _reason=None)
            if status == "SystemUpdating":
                n["LastSoftwareUpdateTime"] = now
        elif status == "ShuttingDown":
            del nodes[iid]
            if n.get("_replace"):
                group = self.group(cluster, n["InstanceGroupName"])
                self.launch(cluster, group, n["_az"], n["NodeLogicalId"], at=now)

    def _recover(self, cluster: dict[str, Any], n: dict[str, Any], action: str,
                 now: float) -> None:
        # a repair made by hand stands in for HyperPod's own pending one (not both)
        n.pop("_auto_at", None)
        n.pop("_auto_action", None)
        if action == "reboot":
            n.update(Status="Pending", Message="Rebooting", _until=now + REBOOT_SECONDS)
        else:
            n.update(Status="ShuttingDown", Message="Replacing", _replace=True,
                     _until=now + SHUTDOWN_SECONDS)
        self.event(cluster, "Info", f"Instance {n['InstanceId']} is being "
                   f"{'rebooted' if action == 'reboot' else 'replaced'}.",
                   group=n["InstanceGroupName"], instance=n["InstanceId"], at=now)

    def mark_unhealthy(self, cluster_name: str, instance_id: str | None, action: str,
                       reason: str) -> dict[str, Any]:
        cluster = self.get_cluster(cluster_name)
        nodes = self.nodes(cluster["ClusterName"])
        running = [n for n in nodes.values() if n["Status"] == "Running"]
        if instance_id:
            running = [n for n in running if n["InstanceId"] == instance_id]
        if not running:
            raise KeyError(f"no Running node {instance_id or ''} in {cluster_name}")
        node = running[0] if instance_id else self.w.rng.choice(running)
        label = "UnschedulablePendingReboot" if action == "reboot" \
            else "UnschedulablePendingReplacement"
        node.update(_health=label, _reason=reason)
        self.event(cluster, "Warn", f"Instance {node['InstanceId']} failed a health check "
                   f"({reason}) and is marked {label}.", group=node["InstanceGroupName"],
                   instance=node["InstanceId"], failure=reason)
        if cluster.get("NodeRecovery", "Automatic") == "Automatic":
            node.update(_auto_at=self.w.now() + AUTO_RECOVERY_SECONDS, _auto_action=action)
        return cast("dict[str, Any]", node)

    def degrade_efa(self, cluster_name: str, instance_id: str, factor: float) -> None:
        """The node's EFA links carry `factor` of their line rate (a link that trained at a
        lower speed, or drops and retransmits); a replace brings a new instance without it."""
        nodes = self.nodes(self.get_cluster(cluster_name)["ClusterName"])
        if instance_id not in nodes:
            raise KeyError(f"no node {instance_id} in {cluster_name}")
        nodes[instance_id]["_efa_factor"] = factor


def _next_event(n: dict[str, Any]) -> float | None:
    times = [t for t in (n.get("_until"), n.get("_auto_at")) if t is not None]
    return min(times) if times else None


def _capacity_type(group: dict[str, Any]) -> str:
    if group.get("TrainingPlanArn"):
        return "training-plan"
    if "Spot" in (group.get("CapacityRequirements") or {}):
        return "spot"
    return "on-demand"

