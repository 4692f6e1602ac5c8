"""HyperPod clusters: Creating -> InService (or Failed), Updating, SystemUpdating, Deleting."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws import iam_rules
from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.eks.access import hyperpod_access_entries
from podplane_sandbox.aws.errors import (
    sm_conflict,
    sm_in_use,
    sm_limit,
    sm_validation,
)
from podplane_sandbox.aws.hyperpod.autoscaling import (
    UPDATED,
    autoscaling_update,
    check_autoscaling,
    check_cluster_role,
)
from podplane_sandbox.aws.hyperpod.capacity import quota_name
from podplane_sandbox.aws.hyperpod.events import EventsMixin
from podplane_sandbox.aws.hyperpod.groups import apply_update, check_update, new_group
from podplane_sandbox.aws.hyperpod.nodes import SHUTDOWN_SECONDS, NoCapacity
from podplane_sandbox.aws.hyperpod.rules import check_vpc_config, eks_vpc
from podplane_sandbox.tally import note

FAIL_SECONDS = 90.0            # capacity failures surface quickly
SCRIPT_FAIL_SECONDS = 420.0    # lifecycle-script failures surface after the scripts ran
DELETE_SECONDS = 300.0
ROLLBACK_SECONDS = 150.0
TOP_LEVEL = ("VpcConfig", "Orchestrator", "NodeRecovery", "NodeProvisioningMode",
             "TieredStorageConfig", "ClusterRole")


class ClustersMixin(EventsMixin):
    def create_cluster(self, p: dict[str, Any]) -> dict[str, Any]:
        name = p["ClusterName"]
        if name in self.table("clusters"):
            raise sm_in_use(f"Cluster {name} already exists")
        self.check_orchestrator(p.get("Orchestrator") or {})
        iam_rules.check_execution_roles(self.w, p.get("InstanceGroups", []))
        groups = [new_group(spec) for spec in p.get("InstanceGroups", [])]
        self.check_networks(p, p.get("VpcConfig"), p.get("InstanceGroups", []))
        _unique_names(groups)
        self.check_quotas(groups, {})
        now = self.w.now()
        cluster = {"ClusterName": name, "ClusterArn": self.w.arn(
                       "sagemaker", f"cluster/{self.w.hex_id(12)}"),
                   "ClusterStatus": "Creating", "CreationTime": now, "InstanceGroups": groups,
                   "NodeRecovery": p.get("NodeRecovery", "Automatic")}
        cluster.update({k: p[k] for k in TOP_LEVEL if k in p})
        if "AutoScaling" in p:
            cluster["AutoScaling"] = {"Mode": p["AutoScaling"]["Mode"], "Status": "InService",
                                      **({"AutoScalerType": p["AutoScaling"]["AutoScalerType"]}
                                         if "AutoScalerType" in p["AutoScaling"] else {})}
        for group in groups:  # validate everything before storing anything
            self.bind_plan(cluster, group)
        self.table("clusters")[name] = cluster
        self.table("tags")[cluster["ClusterArn"]] = list(p.get("Tags", []))
        self.event(cluster, "Info", "Cluster creation started.")
        self._launch_groups(cluster, groups, fail_cluster=True)
        script = self.w.faults.fire("cluster_creation_failure", cluster=name)
        if script and not cluster.get("_fail_at"):
            cluster["_fail_at"] = now + SCRIPT_FAIL_SECONDS
            cluster["_fail_msg"] = script.get("message") or (
                "Lifecycle scripts did not run successfully: on_create.sh exited with status 1 "
                "on 1 instance. Check the CloudWatch log group /aws/sagemaker/Clusters.")
        unreadable = iam_rules.unreadable_lifecycle(p.get("InstanceGroups", []))
        if unreadable and not cluster.get("_fail_at"):  # found when instances bootstrap
            cluster.update(_fail_at=now + SCRIPT_FAIL_SECONDS, _fail_msg=unreadable)
        self.w.record("sagemaker", "CreateCluster", name,
                      groups=[g["InstanceGroupName"] for g in groups])
        note("hyperpod_create")
        hyperpod_access_entries(self.w, p)
        return {"ClusterArn": cluster["ClusterArn"]}

    def _launch_groups(self, cluster: dict[str, Any], groups: list[dict[str, Any]],
                       fail_cluster: bool, at: float | None = None) -> None:
        """Launch what each group lacks. Short of capacity: a new cluster fails, unless it uses
        continuous provisioning, which keeps what it got and retries as capacity appears."""
        continuous = cluster.get("NodeProvisioningMode") == "Continuous"
        for group in groups:
            was_waiting = group.pop("_waiting", None)
            existing = sum(1 for n in self.nodes(cluster["ClusterName"]).values()
                           if n["InstanceGroupName"] == group["InstanceGroupName"]
                           and n["Status"] != "ShuttingDown")
            for _ in range(group["TargetCount"] - existing):
                try:
                    node = self.launch(cluster, group, self.place(cluster, group), at=at)
                    self.event(cluster, "Info", f"Instance {node['InstanceId']} is being "
                               "provisioned.", group=group["InstanceGroupName"],
                               instance=node["InstanceId"], at=at)
                except NoCapacity as e:
                    if continuous:  # reported as an event; the cluster stays InService
                        if not was_waiting:
                            self.event(cluster, "Error", e.message,
                                       group=group["InstanceGroupName"], at=at)
                        group["_waiting"] = True
                    else:
                        cluster["_fail_msg"] = e.message
                        group["Status"] = "Degraded"
                        if fail_cluster:
                            cluster["_fail_at"] = self.w.now() + FAIL_SECONDS
                    break

    def check_networks(self, where: dict[str, Any], vpc_config: dict[str, Any] | None,
                       specs: list[dict[str, Any]]) -> None:
        """The cluster's and each group's subnets and security groups are the EKS VPC's."""
        arn = (where.get("Orchestrator") or {}).get("Eks", {}).get("ClusterArn", "")
        eks = self.w.service_state("eks").get("clusters", {}).get(arn.rsplit("/", 1)[-1])
        vpc = eks_vpc(eks, self.w.region) if eks else None
        name = eks["name"] if eks else ""
        for config in [vpc_config] + [s.get("OverrideVpcConfig") for s in specs]:
            check_vpc_config(config, vpc, name, self.w.region)

    def check_orchestrator(self, orchestrator: dict[str, Any]) -> None:
        """HyperPod on EKS needs an ACTIVE EKS cluster that accepts access entries."""
        arn = orchestrator.get("Eks", {}).get("ClusterArn")
        if not arn:
            return
        eks = self.w.service_state("eks").get("clusters", {}).get(arn.rsplit("/", 1)[-1])
        if eks is None or eks["arn"] != arn:
            raise sm_validation(f"The EKS cluster {arn} does not exist.")
        if eks["status"] != "ACTIVE":
            raise sm_validation(f"The EKS cluster {arn} is {eks['status']}; it must be ACTIVE.")
        if eks["accessConfig"]["authenticationMode"] == "CONFIG_MAP":
            raise sm_validation(f"The EKS cluster {arn} must use authentication mode API or "
                                "API_AND_CONFIG_MAP.")

    def check_quotas(self, groups: list[dict[str, Any]], current: dict[str, int]) -> None:
        wanted: dict[str, int] = {}
        for g in groups:
            wanted[g["InstanceType"]] = wanted.get(g["InstanceType"], 0) + g["TargetCount"]
        for itype, count in wanted.items():
            in_use = self.usage(itype)
            delta = count - current.get(itype, 0)
            limit = self.cap.limit(itype)
            forced = self.w.faults.fire("quota_exceeded", instance_type=itype)
            if delta > 0 and (forced or in_use + delta > limit):
                raise sm_limit(f"The account-level service limit '{quota_name(itype)}' is "
                               f"{limit} Instances, with current utilization of {in_use} "
                               f"Instances and a request delta of {delta} Instances. Please use "
                               "AWS Service Quotas to request an increase for this quota.")

    def usage(self, itype: str) -> int:
        return sum(g["TargetCount"] for c in self.table("clusters").values()
                   if c["ClusterStatus"] not in ("Failed", "Deleting")
                   for g in c["InstanceGroups"] if g["InstanceType"] == itype)

    def describe_cluster(self, p: dict[str, Any]) -> dict[str, Any]:
        cluster = self.get_cluster(p["ClusterName"])
        out = dict(cluster)
        if cluster.get("_fail_msg") and cluster["ClusterStatus"] in ("Failed", "InService",
                                                                     "RollingBack"):
            out["FailureMessage"] = cluster["_fail_msg"]
        return out

    def list_clusters(self, p: dict[str, Any]) -> dict[str, Any]:
        clusters = [c for c in self.table("clusters").values()
                    if p.get("NameContains", "") in c["ClusterName"]]
        if p.get("SortBy") == "NAME":
            clusters.sort(key=lambda c: c["ClusterName"])
        else:
            clusters.sort(key=lambda c: c["CreationTime"], reverse=True)
        if p.get("SortOrder") == "Ascending" and p.get("SortBy") != "NAME":
            clusters.reverse()
        summaries = [{"ClusterArn": c["ClusterArn"], "ClusterName": c["ClusterName"],
                      "CreationTime": c["CreationTime"], "ClusterStatus": c["ClusterStatus"],
                      **({"TrainingPlanArns": arns} if (arns := _plans(c)) else {})}
                     for c in clusters]
        page, nxt = paginate(summaries, p, "MaxResults", "NextToken")
        return {"ClusterSummaries": page, **({"NextToken": nxt} if nxt else {})}

    def update_cluster(self, p: dict[str, Any]) -> dict[str, Any]:
        cluster = self.get_cluster(p["ClusterName"])
        self.require_in_service(cluster)
        existing = {g["InstanceGroupName"]: g for g in cluster["InstanceGroups"]}
        to_delete = set(p.get("InstanceGroupsToDelete", []))
        iam_rules.check_execution_roles(self.w, p.get("InstanceGroups", []))
        unknown = to_delete - set(existing)
        if unknown:
            raise sm_validation(f"Instance groups {sorted(unknown)} to delete do not exist.")
        added, scaled = [], []
        for spec in p.get("InstanceGroups", []):
            group = existing.get(spec["InstanceGroupName"])
            if group is None:
                added.append(new_group(spec))
            else:
                check_update(group, spec)
                scaled.append((group, spec))
        self.check_networks(cluster, None, [g["_spec"] for g in added])
        current = {g["InstanceType"]: 0 for g in added}
        proposed = added + [{"InstanceType": g["InstanceType"],
                             "TargetCount": s["InstanceCount"]} for g, s in scaled]
        for g, _ in scaled:
            current[g["InstanceType"]] = current.get(g["InstanceType"], 0) + g["TargetCount"]
        self.check_quotas(proposed, current)
        check_cluster_role(cluster, p)
        if "AutoScaling" in p:
            check_autoscaling(self.w, cluster, p)
        for group in added:
            self.bind_plan(cluster, group)
        for key in UPDATED:
            if key in p:
                cluster[key] = p[key]
        if "AutoScaling" in p:
            autoscaling_update(cluster, p)
        self._apply_update(cluster, added, scaled, to_delete)
        iam_rules.fail_added_groups(self, cluster, added, SCRIPT_FAIL_SECONDS)
        self.w.record("sagemaker", "UpdateCluster", cluster["ClusterName"],
                      added=[g["InstanceGroupName"] for g in added],
                      scaled=[g["InstanceGroupName"] for g, _ in scaled],
                      deleted=sorted(to_delete), image_ids={
                          s["InstanceGroupName"]: s["ImageId"]
                          for s in p.get("InstanceGroups", []) if "ImageId" in s})
        return {"ClusterArn": cluster["ClusterArn"]}

    def _apply_update(self, cluster: dict[str, Any], added: list[dict[str, Any]],
                      scaled: list[tuple[dict[str, Any], dict[str, Any]]],
                      to_delete: set[str]) -> None:
        now = self.w.now()
        cluster.pop("_fail_msg", None)
        cluster["ClusterStatus"] = "Updating"
        for group, spec in scaled:
            apply_update(group, spec)
            group["Status"] = "Updating"
            self._shrink(cluster, group, now)
        cluster["InstanceGroups"].extend(added)
        for name in to_delete:
            group = self.group(cluster, name)
            group.update(Status="Deleting", TargetCount=0)
            self._shrink(cluster, group, now)
        self._launch_groups(cluster, [g for g, _ in scaled] + added, fail_cluster=False)

    def _shrink(self, cluster: dict[str, Any], group: dict[str, Any], now: float) -> None:
        live = [n for n in self.nodes(cluster["ClusterName"]).values()
                if n["InstanceGroupName"] == group["InstanceGroupName"]
                and n["Status"] != "ShuttingDown"]
        for n in sorted(live, key=lambda n: n["LaunchTime"])[group["TargetCount"]:]:
            n.update(Status="ShuttingDown", _until=now + SHUTDOWN_SECONDS)

    def delete_cluster(self, p: dict[str, Any]) -> dict[str, Any]:
        cluster = self.get_cluster(p["ClusterName"])
        if cluster["ClusterStatus"] in ("Creating", "Updating", "SystemUpdating"):
            raise sm_conflict(f"Cluster {cluster['ClusterName']} is in "
                              f"{cluster['ClusterStatus']} status and cannot be deleted now.")
        if cluster["ClusterStatus"] != "Deleting":
            now = self.w.now()
            cluster.update(ClusterStatus="Deleting", _delete_at=now + DELETE_SECONDS)
            for n in self.nodes(cluster["ClusterName"]).values():
                n.update(Status="ShuttingDown", _until=now + SHUTDOWN_SECONDS, _replace=False)
            self.w.record("sagemaker", "DeleteCluster", cluster["ClusterName"])
        return {"ClusterArn": cluster["ClusterArn"]}

    # lifecycle ----------------------------------------------------------------------------
    def tick(self, now: float) -> None:
        super().tick(now)
        clusters = self.table("clusters")
        for name, cluster in list(clusters.items()):
            waiting = [g for g in cluster["InstanceGroups"] if g.get("_waiting")]
            if waiting and cluster["ClusterStatus"] not in ("Deleting", "Failed"):
                self._launch_groups(cluster, waiting, fail_cluster=False, at=now)
                for g in waiting:
                    if not g.get("_waiting"):
                        self.event(cluster, "Info", f"Instance group {g['InstanceGroupName']}"
                                   " reached its target count.", group=g["InstanceGroupName"],
                                   at=now)
            self.tick_nodes(cluster, now)
            status = cluster["ClusterStatus"]
            if status == "Deleting" and now >= cluster["_delete_at"]:
                del clusters[name]
                self.table("nodes").pop(name, None)
                self.table("tags").pop(cluster["ClusterArn"], None)
                self.table("events").pop(name, None)
                continue
            if status == "Creating" and cluster.get("_fail_at") and now >= cluster["_fail_at"]:
                self._roll_back(cluster, cluster["_fail_at"])
                status = "RollingBack"
            if status == "RollingBack" and now >= cluster["_failed_at"]:
                self._fail(cluster)
            if status in ("Creating", "Updating", "SystemUpdating"):
                self._settle(cluster)
            self._counts(cluster)

    def _roll_back(self, cluster: dict[str, Any], at: float) -> None:
        """A failed creation rolls back (instances terminate) before it shows Failed."""
        cluster.update(ClusterStatus="RollingBack", _failed_at=at + ROLLBACK_SECONDS)
        for n in self.nodes(cluster["ClusterName"]).values():
            n.update(Status="ShuttingDown", _until=at + SHUTDOWN_SECONDS, _replace=False)

    def _fail(self, cluster: dict[str, Any]) -> None:
        cluster["ClusterStatus"] = "Failed"
        message = cluster.get("_fail_msg") or "Cluster creation failed."
        self.event(cluster, "Error", f"Cluster creation failed: {message}", failure=message)
        for group in cluster["InstanceGroups"]:
            group["Status"] = "Failed"
        self.table("nodes")[cluster["ClusterName"]] = {}

    def _settle(self, cluster: dict[str, Any]) -> None:
        nodes = self.nodes(cluster["ClusterName"]).values()
        if any(n["Status"] != "Running" for n in nodes):
            return
        if cluster.get("_fail_at"):
            return
        cluster["InstanceGroups"] = [g for g in cluster["InstanceGroups"]
                                     if g["Status"] != "Deleting"]
        for group in cluster["InstanceGroups"]:
            if group["Status"] != "Degraded":
                group["Status"] = "InService"
        if cluster["ClusterStatus"] != "InService":
            self.event(cluster, "Info", f"Cluster status changed from "
                       f"{cluster['ClusterStatus']} to InService.")
        cluster["ClusterStatus"] = "InService"

    def _counts(self, cluster: dict[str, Any]) -> None:
        for group in cluster["InstanceGroups"]:
            running = sum(1 for n in self.nodes(cluster["ClusterName"]).values()
                          if n["InstanceGroupName"] == group["InstanceGroupName"]
                          and n["Status"] == "Running")
            group["CurrentCount"] = running
            group["InstanceTypeDetails"] = [{"InstanceType": group["InstanceType"],
                                             "CurrentCount": running,
                                             "ThreadsPerCore": group["ThreadsPerCore"]}]


def _unique_names(groups: list[dict[str, Any]]) -> None:
    names = [g["InstanceGroupName"] for g in groups]
    if len(names) != len(set(names)):
        raise sm_validation("Instance group names must be unique within a cluster.")


def _plans(cluster: dict[str, Any]) -> list[str]:
    return sorted({g["TrainingPlanArn"] for g in cluster["InstanceGroups"]
                   if g.get("TrainingPlanArn")})
