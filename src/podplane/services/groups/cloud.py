"""What instance-group and node work reads from the cloud, fresh every time.

The cloud is the source of truth: the HyperPod cluster (DescribeCluster), its nodes
(ListClusterNodes) and the VPC's subnets. Our `clusters` row only says where to look.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.cloud.ports_aws import HyperPodPort, QuotasPort
from podplane.cloud.ports_ec2 import Ec2Port
from podplane.domain.errors import Conflict, InvalidInput
from podplane.domain.network import COMPUTE_TAG, SubnetFact
from podplane.domain.preflight import quota_hint
from podplane.services.scope import ClusterRef, groups_of

Shape = dict[str, Any]
CLIENT_TOKEN_TAG = "podplane:client-token"


def template_group(described: Shape) -> Shape:
    """The cluster's first group: new groups copy its lifecycle config and execution role."""
    groups = groups_of(described)
    if not groups:
        raise Conflict("The cluster has no instance group to copy lifecycle scripts from.")
    return groups[0]


def vpc_config(described: Shape, group: Shape) -> Shape:
    return dict(group.get("OverrideVpcConfig") or described.get("VpcConfig") or {})


def used_subnets(described: Shape) -> set[str]:
    return {s for g in groups_of(described) for s in vpc_config(described, g).get("Subnets", [])}


@dataclass(frozen=True)
class Network:
    vpc_id: str
    vpc_cidr: str
    subnets: list[SubnetFact]


async def network(ec2: Ec2Port, described: Shape, vpc_id: str | None) -> Network:
    """The cluster's VPC and its subnets. Subnets that already hold a group count as compute
    subnets even without our tag (imported clusters)."""
    in_use = used_subnets(described)
    if vpc_id is None:
        if not in_use:
            raise Conflict("Cannot find the cluster's VPC: no group has a subnet.")
        first = await ec2.describe_subnets(SubnetIds=[sorted(in_use)[0]])
        vpc_id = str(first["Subnets"][0]["VpcId"])
    vpc = (await ec2.describe_vpcs(VpcIds=[vpc_id]))["Vpcs"][0]
    raw = (await ec2.describe_subnets(
        Filters=[{"Name": "vpc-id", "Values": [vpc_id]}]))["Subnets"]
    return Network(vpc_id, str(vpc["CidrBlock"]), [_fact(s, in_use) for s in raw])


def _fact(s: Shape, in_use: set[str]) -> SubnetFact:
    tags = {t["Key"]: t["Value"] for t in s.get("Tags") or []}
    if s["SubnetId"] in in_use:
        tags[COMPUTE_TAG] = "true"
    return SubnetFact(s["SubnetId"], s["CidrBlock"], s["AvailabilityZone"],
                      int(s.get("AvailableIpAddressCount", 0)), tags)


async def subnet_by_token(ec2: Ec2Port, token: str) -> Shape | None:
    found = await ec2.describe_subnets(Filters=[
        {"Name": f"tag:{CLIENT_TOKEN_TAG}", "Values": [token]}])
    subnets = found.get("Subnets") or []
    return dict(subnets[0]) if subnets else None


@dataclass(frozen=True)
class PlanFacts:
    availability_zone: str
    instance_type: str
    total: int
    available: int


async def training_plan(hyperpod: HyperPodPort, arn: str) -> PlanFacts:
    for plan in await hyperpod.list_training_plans():
        if plan.get("TrainingPlanArn") != arn:
            continue
        reserved = (plan.get("ReservedCapacitySummaries") or [{}])[0]
        if not reserved.get("AvailabilityZone"):
            break
        return PlanFacts(reserved["AvailabilityZone"], str(reserved.get("InstanceType", "")),
                         int(plan.get("TotalInstanceCount", 0)),
                         int(plan.get("AvailableInstanceCount", 0)))
    raise InvalidInput(f"Training plan {arn} was not found in this account and region.",
                       hint="List plans with `aws sagemaker list-training-plans`.",
                       field="training_plan_arn")


async def group_nodes(hyperpod: HyperPodPort, ref: ClusterRef, group: str) -> list[Shape]:
    return [n for n in await hyperpod.list_cluster_nodes(ref.hyperpod)
            if n.get("InstanceGroupName") == group]


async def check_quota(quotas: QuotasPort, described: Shape, instance_type: str,
                      delta: int) -> None:
    """Refuse before any mutation when the account's '<type> for cluster usage' quota has no
    room for `delta` more instances (counting this cluster's groups of that type)."""
    if delta <= 0:
        return
    found = await quotas.cluster_quota(instance_type)
    if found is None:
        return
    limit = int(found["value"])
    used = sum(int(g.get("TargetCount") or 0) for g in groups_of(described)
               if g.get("InstanceType") == instance_type)
    if used + delta > limit:
        err = InvalidInput(
            f"The SageMaker quota '{instance_type} for cluster usage' is {limit}; this "
            f"cluster uses {used} and {delta} more were requested.",
            hint=quota_hint(instance_type, found["source"] == "default"), field="count",
            quota=limit, in_use=used, quota_source=found["source"])
        err.code = "quota_exceeded"
        raise err
