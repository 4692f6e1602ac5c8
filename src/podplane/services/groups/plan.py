"""The plan for adding a group: AZ (a training plan's wins), subnet placement through the one
capacity-path function, and the exact UpdateCluster entry. Shown on dry_run and recomputed
from fresh facts inside the operation."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from podplane.domain.errors import GroupExists, InvalidInput
from podplane.domain.instance_groups import (
    NewGroup,
    deep_health_checks_for,
    group_spec,
)
from podplane.domain.network import Placement, place_compute_subnet
from podplane.domain.subnet_sizing import subnet_ips
from podplane.services import scope
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.network import vpc_cidrs
from podplane.services.groups import cloud as gc

PENDING_SUBNET = "<new-compute-subnet>"


@dataclass
class AddPlan:
    availability_zone: str
    placement: Placement
    security_group_ids: list[str]
    template: dict[str, Any]
    deep_health_checks: list[str]
    notes: list[str] = field(default_factory=list)
    az_adopted_from_training_plan: bool = False

    def spec(self, group: NewGroup, subnet_id: str | None = None) -> dict[str, Any]:
        return group_spec(group, template=self.template,
                          subnet_id=subnet_id or self.placement.subnet_id or PENDING_SUBNET,
                          security_group_ids=self.security_group_ids,
                          deep_health_checks=self.deep_health_checks)

    def describe(self, group: NewGroup) -> dict[str, Any]:
        return {"availability_zone": self.availability_zone,
                "az_adopted_from_training_plan": self.az_adopted_from_training_plan,
                "subnet": asdict(self.placement), "instance_group": self.spec(group),
                "notes": list(self.notes)}


async def plan_add(cloud: Cloud, ref: scope.ClusterRef, group: NewGroup,
                   described: dict[str, Any] | None = None) -> AddPlan:
    described = described or await scope.describe(cloud.aws.hyperpod, ref)
    if scope.find_group(described, group.name) is not None:
        raise GroupExists(f"Cluster {ref.name!r} already has an instance group {group.name!r}.",
                       hint="Pick another name, or scale the existing group.", field="name")
    template = gc.template_group(described)
    if not group.training_plan_arn:  # a plan brings its own reserved capacity
        await gc.check_quota(cloud.aws.quotas, described, group.instance_type, group.count)
    net = await gc.network(cloud.aws.ec2, described, ref.vpc_id)
    notes: list[str] = []
    az, adopted = await _availability_zone(cloud, group, template, described, net, notes)
    extra = tuple(await vpc_cidrs(cloud.aws.ec2, net.vpc_id, net.vpc_cidr))
    placement = place_compute_subnet(az, net.subnets, net.vpc_cidr,
                                     needed_ips=subnet_ips(group.instance_type, group.count),
                                     explicit_subnet_id=group.subnet_id,
                                     force_new=group.new_subnet, vpc_cidrs=extra)
    notes.append(f"Subnet: {placement.reason}.")
    deep = new_group_checks(template, group.instance_type)
    notes.append("On-start deep health checks: " + (", ".join(deep) if deep else "none") + " ("
                 "on when the cluster uses them and HyperPod defines them for the type).")
    sgs = list(gc.vpc_config(described, template).get("SecurityGroupIds") or [])
    return AddPlan(az, placement, sgs, template, deep, notes, adopted)


def new_group_checks(template: dict[str, Any], instance_type: str) -> list[str]:
    """A new group runs on-start deep health checks when the cluster does, limited to the
    checks HyperPod has for its type (none on CPU types, no connectivity check without EFA)."""
    if not template.get("OnStartDeepHealthChecks"):
        return []
    return list(deep_health_checks_for(instance_type))


async def _availability_zone(cloud: Cloud, group: NewGroup, template: dict[str, Any],
                             described: dict[str, Any], net: gc.Network,
                             notes: list[str]) -> tuple[str, bool]:
    if group.training_plan_arn:
        plan = await gc.training_plan(cloud.aws.hyperpod, group.training_plan_arn)
        _check_plan(plan, group)
        if group.availability_zone and group.availability_zone != plan.availability_zone:
            notes.append(f"The training plan reserves capacity in {plan.availability_zone}; "
                         f"using it instead of the requested {group.availability_zone}.")
            return plan.availability_zone, True
        return plan.availability_zone, False
    if group.availability_zone:
        return group.availability_zone, False
    subnets = gc.vpc_config(described, template).get("Subnets") or []
    by_id = {s.subnet_id: s.availability_zone for s in net.subnets}
    for subnet in subnets:
        if subnet in by_id:
            notes.append(f"No AZ given: using the first group's AZ {by_id[subnet]}.")
            return by_id[subnet], False
    raise InvalidInput("availability_zone is required.", field="availability_zone")


def _check_plan(plan: gc.PlanFacts, group: NewGroup) -> None:
    if plan.instance_type and plan.instance_type != group.instance_type:
        raise InvalidInput(f"The training plan is for {plan.instance_type}, not "
                           f"{group.instance_type}.", field="instance_type")
    if group.count > plan.available:
        raise InvalidInput(f"The training plan has {plan.available} instance(s) available; "
                           f"{group.count} requested.", field="count",
                           hint="Request at most the plan's available count.")
