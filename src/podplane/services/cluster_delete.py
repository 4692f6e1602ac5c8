"""cluster.delete: ordered teardown (HyperPod -> EKS -> network -> identity -> forget).

Only resources tagged `podplane:managed=true` are deleted unless the admin forces it; an
imported cluster is only detached unless `delete_resources` is set. The shared S3 bucket is
kept: it holds the users' data.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.errors import Conflict
from podplane.ops import workflows
from podplane.ops.context import StepContext
from podplane.services.cloud_access import Cloud, cloud_of
from podplane.services.cluster_identity import delete_identity
from podplane.services.cluster_network import MANAGED_TAG, tag_filter
from podplane.services.context import AppState
from podplane.store import clusters as repo

KIND = "cluster.delete"
POLL = 30.0


def register(app: AppState) -> None:
    steps = DeleteSteps(app)
    workflows.register(KIND, [(n, getattr(steps, n)) for n in
                              ("hyperpod", "eks", "network", "identity", "forget")])


def _ours(tags: dict[str, str], force: bool, what: str) -> None:
    if tags.get(MANAGED_TAG) != "true" and not force:
        raise Conflict(f"{what} was not created by podplane; it is left in place.",
                       hint="An admin can delete it anyway with force=true.")


class DeleteSteps:
    def __init__(self, app: AppState) -> None:
        self.app = app

    @property
    def cloud(self) -> Cloud:
        return cloud_of(self.app)

    async def _skip(self, ctx: StepContext) -> bool:
        if not ctx.params["delete_resources"]:
            await ctx.phase("skipped", reason="detach only: cloud resources are kept")
            return True
        return False

    async def hyperpod(self, ctx: StepContext) -> dict[str, Any]:
        name = ctx.params.get("hyperpod_cluster_name")
        if await self._skip(ctx) or not name:
            return {}
        hp = self.cloud.aws.hyperpod
        found = await hp.describe_cluster(name)
        if found is None:
            return {"hyperpod": "absent"}
        listed = await self.cloud.aws.caller.call("sagemaker", "list_tags",
                                                  ResourceArn=found["ClusterArn"])
        _ours({t["Key"]: t["Value"] for t in listed.get("Tags", [])}, ctx.params["force"],
              f"HyperPod cluster {name}")
        await ctx.phase("deleting")
        while found is not None:
            if found["ClusterStatus"] in ("Creating", "Updating", "SystemUpdating"):
                await ctx.note(f"waiting for {found['ClusterStatus']} to finish")
            elif found["ClusterStatus"] != "Deleting":
                await hp.delete_cluster(name)
            await ctx.sleep(POLL)
            found = await hp.describe_cluster(name)
        return {"hyperpod": "deleted"}

    async def eks(self, ctx: StepContext) -> dict[str, Any]:
        name = ctx.params["eks_cluster_name"]
        if await self._skip(ctx):
            return {}
        eks = self.cloud.aws.eks
        found = await eks.describe_cluster(name)
        if found is None:
            return {"eks": "absent"}
        _ours(found.get("tags") or {}, ctx.params["force"], f"EKS cluster {name}")
        await self.cloud.kube.forget(name)
        await ctx.phase("deleting")
        if found["status"] != "DELETING":
            await eks.delete_cluster(name)
        while await eks.describe_cluster(name) is not None:
            await ctx.sleep(POLL)
        return {"eks": "deleted"}

    async def network(self, ctx: StepContext) -> dict[str, Any]:
        if await self._skip(ctx):
            return {}
        ec2 = self.cloud.aws.ec2
        name = ctx.params["name"]
        mine = tag_filter(name)
        await ctx.phase("deleting")
        deleted: list[str] = []
        for ep in (await ec2.call("describe_vpc_endpoints", Filters=mine))["VpcEndpoints"]:
            await ec2.call("delete_vpc_endpoints", VpcEndpointIds=[ep["VpcEndpointId"]])
            deleted.append(ep["VpcEndpointId"])
        for nat in (await ec2.call("describe_nat_gateways", Filters=mine))["NatGateways"]:
            if nat.get("State") not in ("deleted", "deleting"):
                await ec2.call("delete_nat_gateway", NatGatewayId=nat["NatGatewayId"])
                deleted.append(nat["NatGatewayId"])
        for eip in (await ec2.call("describe_addresses", Filters=mine))["Addresses"]:
            await ec2.call("release_address", AllocationId=eip["AllocationId"])
        for rt in (await ec2.call("describe_route_tables", Filters=mine))["RouteTables"]:
            for assoc in rt.get("Associations", []):
                if not assoc.get("Main"):
                    await ec2.call("disassociate_route_table",
                                   AssociationId=assoc["RouteTableAssociationId"])
            await ec2.call("delete_route_table", RouteTableId=rt["RouteTableId"])
        for igw in (await ec2.call("describe_internet_gateways",
                                   Filters=mine))["InternetGateways"]:
            for att in igw.get("Attachments", []):
                await ec2.call("detach_internet_gateway", InternetGatewayId=igw[
                    "InternetGatewayId"], VpcId=att["VpcId"])
            await ec2.call("delete_internet_gateway", InternetGatewayId=igw["InternetGatewayId"])
        for subnet in (await ec2.call("describe_subnets", Filters=mine))["Subnets"]:
            await ec2.call("delete_subnet", SubnetId=subnet["SubnetId"])
        for sg in (await ec2.call("describe_security_groups", Filters=mine))["SecurityGroups"]:
            await ec2.call("delete_security_group", GroupId=sg["GroupId"])
        for vpc in (await ec2.call("describe_vpcs", Filters=mine))["Vpcs"]:
            await ec2.call("delete_vpc", VpcId=vpc["VpcId"])
            deleted.append(vpc["VpcId"])
        return {"network_deleted": deleted}

    async def identity(self, ctx: StepContext) -> dict[str, Any]:
        if await self._skip(ctx):
            return {}
        async with self.app.sessions() as db:
            row = await repo.get(db, ctx.params["name"])
        gone = await delete_identity(self.cloud.aws.caller, ctx.params["name"],
                                     row.region if row is not None else None)
        return {"roles_deleted": gone, "bucket": "kept (holds data)"}

    async def forget(self, ctx: StepContext) -> dict[str, Any]:
        async with self.app.sessions.begin() as db:
            await repo.remove(db, ctx.params["name"])
        return {"forgotten": ctx.params["name"]}
