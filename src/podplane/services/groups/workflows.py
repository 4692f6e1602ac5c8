"""The durable workflows behind instance-group changes: add, scale, delete.

Each one submits a single UpdateCluster (exactly once, inspecting on resume), then polls the
source of truth until the group reaches its target, then waits for its Kubernetes Nodes.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_ec2 import Ec2Port
from podplane.domain.errors import CloudError
from podplane.domain.instance_groups import CapacityType, NewGroup, group_spec
from podplane.domain.network import COMPUTE_TAG
from podplane.ops.context import StepContext
from podplane.ops.mutate import mutate_once
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.network import add_vpc_cidr
from podplane.services.groups import cloud as gc
from podplane.services.groups import steps
from podplane.services.groups.plan import new_group_checks, plan_add

ADD, SCALE, DELETE = "instance_group.add", "instance_group.scale", "instance_group.delete"
Shape = dict[str, Any]


def new_group(params: Shape) -> NewGroup:
    raw = dict(params["group"])
    raw["capacity_type"] = CapacityType(raw["capacity_type"])
    return NewGroup(**raw)


def declare(cloud: Cloud) -> list[Workflow]:
    s = GroupSteps(cloud)
    return [
        Workflow.of(ADD, ("place", s.place), ("update-cluster", s.add_group),
                    ("wait-nodes", s.wait_nodes), ("kubernetes", s.kubernetes)),
        Workflow.of(SCALE, ("update-cluster", s.scale), ("wait-nodes", s.wait_nodes),
                    ("kubernetes", s.kubernetes)),
        Workflow.of(DELETE, ("update-cluster", s.delete), ("wait-nodes", s.wait_nodes),
                    ("kubernetes", s.kubernetes)),
    ]


class GroupSteps:
    """The steps of the instance-group workflows, each callable alone with a StepContext."""

    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def place(self, ctx: StepContext) -> Shape:
        ref, group = scope.ClusterRef.of(ctx.params), new_group(ctx.params)
        if "subnet_id" in ctx.checkpoint:  # placed before a restart
            return _placed(ctx.checkpoint)
        plan = await plan_add(self.cloud, ref, group)
        subnet_id = plan.placement.subnet_id
        if subnet_id is None:
            subnet_id = await _create_subnet(ctx, self.cloud, ref, plan.availability_zone,
                                             str(plan.placement.cidr),
                                             plan.placement.secondary_cidr)
        await ctx.phase("placed", subnet_id=subnet_id, availability_zone=plan.availability_zone,
                        notes=plan.notes, adopted=plan.az_adopted_from_training_plan)
        return _placed(ctx.checkpoint)

    async def add_group(self, ctx: StepContext) -> Shape:
        ref, group = scope.ClusterRef.of(ctx.params), new_group(ctx.params)
        subnet_id = _placed_subnet(ctx)

        def build(described: Shape) -> Shape:
            return steps.update_params(described, ref, add=[_spec_from(described, group,
                                                                         subnet_id)])

        await steps.update_once(ctx, self.cloud, ref, build,
                                landed=lambda d: scope.find_group(d, group.name) is not None)
        return {}

    async def scale(self, ctx: StepContext) -> Shape:
        ref, name, count = scope.ClusterRef.of(ctx.params), ctx.params["group"], ctx.params["count"]
        await steps.update_once(
            ctx, self.cloud, ref,
            lambda d: steps.update_params(d, ref, changes={name: {"InstanceCount": count}}),
            landed=lambda d: (scope.find_group(d, name) or {}).get("TargetCount") == count)
        return {}

    async def delete(self, ctx: StepContext) -> Shape:
        ref, name = scope.ClusterRef.of(ctx.params), ctx.params["group"]
        await steps.update_once(
            ctx, self.cloud, ref, lambda d: steps.update_params(d, ref, delete=[name]),
            landed=lambda d: (scope.find_group(d, name) or {"Status": "Deleting"}).get("Status")
            == "Deleting")
        return {}

    async def wait_nodes(self, ctx: StepContext) -> Shape:
        ref = scope.ClusterRef.of(ctx.params)
        return await steps.wait_group(ctx, self.cloud, ref, _name(ctx.params), _count(ctx))

    async def kubernetes(self, ctx: StepContext) -> Shape:
        ref = scope.ClusterRef.of(ctx.params)
        name = _name(ctx.params)
        running = {n["InstanceId"] for n in await gc.group_nodes(self.cloud.aws.hyperpod, ref,
                                                                  name)
                   if n["InstanceStatus"]["Status"] == "Running"}
        labels = {steps.GROUP_LABEL: name, steps.CLUSTER_LABEL: ref.hyperpod}
        return await steps.wait_kube_nodes(ctx, self.cloud, ref, labels, running, exact=True)


def _name(params: Shape) -> str:
    group = params["group"]
    return group if isinstance(group, str) else str(group["name"])


def _count(ctx: StepContext) -> int:
    """The group's target: the new count (scale), the group's count (add), gone (delete)."""
    if ctx.kind == DELETE:
        return -1
    if ctx.kind == SCALE:
        return int(ctx.params["count"])
    return int(ctx.params["group"]["count"])


def _placed(checkpoint: Shape) -> Shape:
    return {"subnet_id": checkpoint["subnet_id"],
            "availability_zone": checkpoint["availability_zone"],
            "az_adopted_from_training_plan": checkpoint.get("adopted", False),
            "notes": checkpoint.get("notes", [])}


def _placed_subnet(ctx: StepContext) -> str:
    """What the place step decided, from the operation's result so far."""
    subnet = ctx.results.get("subnet_id")
    if not subnet:
        raise CloudError("The place step did not record a subnet; retry it.",
                         code="placement_missing", retryable=False)
    return str(subnet)


def _spec_from(described: Shape, group: NewGroup, subnet_id: str) -> Shape:
    template = gc.template_group(described)
    sgs = list(gc.vpc_config(described, template).get("SecurityGroupIds") or [])
    return group_spec(group, template=template, subnet_id=subnet_id, security_group_ids=sgs,
                      deep_health_checks=new_group_checks(template, group.instance_type))


async def _create_subnet(ctx: StepContext, cloud: Cloud, ref: scope.ClusterRef, az: str,
                         cidr: str, secondary_cidr: str | None = None) -> str:
    """A tagged /20 compute subnet, created once (found again by its client-token tag), on the
    same route table as the cluster's existing compute subnet."""
    ec2, token = cloud.aws.ec2, ctx.client_token("subnet")
    described = await scope.describe(cloud.aws.hyperpod, ref)
    net = await gc.network(ec2, described, ref.vpc_id)
    if secondary_cidr:  # the VPC is full: AWS's reference adds a /16 for compute
        await add_vpc_cidr(ctx, ec2, net.vpc_id, secondary_cidr)
    tags = [{"Key": "Name", "Value": f"hp-compute-{ref.name}-{az}-{token[-6:]}"},
            {"Key": COMPUTE_TAG, "Value": "true"}, {"Key": "podplane:cluster", "Value": ref.name},
            {"Key": "karpenter.sh/discovery", "Value": ref.name},
            {"Key": gc.CLIENT_TOKEN_TAG, "Value": token}]

    async def submit() -> Shape:
        made = await ec2.create_subnet(VpcId=net.vpc_id, CidrBlock=cidr,
                                       AvailabilityZone=az, TagSpecifications=[
                                           {"ResourceType": "subnet", "Tags": tags}])
        return {"subnet_id": made["Subnet"]["SubnetId"]}

    subnet = await mutate_once(ctx, token=token, submit=submit,
                               inspect=lambda: gc.subnet_by_token(ec2, token),
                               done=lambda s: True, poll_every=5.0, cidr=cidr)
    subnet_id = str(subnet["SubnetId"])
    await _share_route_table(ec2, described, subnet_id)
    return subnet_id


async def _share_route_table(ec2: Ec2Port, described: Shape, subnet_id: str) -> None:
    """Route the new subnet like the first group's (NAT, S3 endpoint), if it has a table."""
    template = gc.vpc_config(described, gc.template_group(described)).get("Subnets") or []
    if not template:
        return
    tables = (await ec2.describe_route_tables(Filters=[
        {"Name": "association.subnet-id", "Values": [template[0]]}])).get("RouteTables") or []
    if not tables:
        return
    mine = (await ec2.describe_route_tables(Filters=[
        {"Name": "association.subnet-id", "Values": [subnet_id]}])).get("RouteTables") or []
    if not mine:
        await ec2.associate_route_table(RouteTableId=tables[0]["RouteTableId"],
                                        SubnetId=subnet_id)
