"""The cluster.create workflow: preflight -> network -> eks -> access -> dependencies (what runs
without nodes) -> hyperpod -> node_dependencies (add-ons whose replicas need nodes) -> storage
-> verify. Every step finds what exists before it creates anything, so
each one can be re-run on its own; cloud mutations without a natural name go through
`mutate_once` with a client token."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from podplane.cloud.ports_aws import EksPort
from podplane.domain.clusters import (
    CREATE_STEPS,
    FIRST_GROUP,
    KUBERNETES_VERSION,
    plan_cluster,
    shared_bucket,
)
from podplane.domain.errors import CloudError
from podplane.domain.iam_policies import (
    eks_cluster_policies,
    execution_role_inline,
    execution_role_policies,
)
from podplane.domain.preflight import check_capacity, raise_if_blocked
from podplane.ops.context import StepContext
from podplane.ops.mutate import IN_FLIGHT, mutate_once
from podplane.ops.workflows import Workflow
from podplane.services.cloud_access import Cloud, engine_cloud
from podplane.services.clusters import dependencies as cluster_deps
from podplane.services.clusters import hyperpod as cluster_hyperpod
from podplane.services.clusters import mount_check
from podplane.services.clusters.control_plane import create_in_supported_azs, used_subnets
from podplane.services.clusters.identity import (
    LIFECYCLE_PREFIX,
    ensure_bucket,
    ensure_lifecycle_script,
    ensure_role,
    role_names,
)
from podplane.services.clusters.inspect import availability_zones, capacity_facts
from podplane.services.clusters.network import CLUSTER_TAG, MANAGED_TAG, Network
from podplane.services.clusters.state import (
    facts_of,
    save_facts,
    set_hyperpod_name,
    set_state,
    spec_from,
)
from podplane.services.clusters.verify import verify_cluster
from podplane.services.context import AppState
from podplane.services.iam_retry import while_iam_propagates

KIND = "cluster.create"
EKS_POLL = 30.0
EKS_DEADLINE = 3600.0  # EKS creates in ~10-15 minutes; an hour means something is wrong


def declare(app: AppState) -> list[Workflow]:
    steps = CreateSteps(app)
    return [Workflow.of(KIND, *((name, getattr(steps, name)) for name in CREATE_STEPS))]


class CreateSteps:
    def __init__(self, app: AppState) -> None:
        self.app = app

    @property
    def cloud(self) -> Cloud:
        return engine_cloud(self.app)

    async def preflight(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        facts = await capacity_facts(self.cloud, spec.instance_type, spec.availability_zone,
                                     spec.count, spec.training_plan_arn)
        report = check_capacity(facts)
        await ctx.phase("checked", findings=[f.code for f in report.findings])
        raise_if_blocked(report, set(ctx.params.get("override_warnings", [])))
        az = report.adopted_az or spec.availability_zone
        await save_facts(self.app, spec.name, availability_zone=az)
        return {"availability_zone": az, "findings": [f.code for f in report.findings]}

    async def network(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        az = (await facts_of(self.app, spec.name)).get("availability_zone",
                                                       spec.availability_zone)
        azs = [z["name"] for z in await availability_zones(self.cloud)]
        layout = plan_cluster(replace(spec, availability_zone=az), azs, "0").vpc
        await ctx.phase("ensuring", vpc_cidr=layout.vpc_cidr)
        net = await Network(self.cloud.aws.ec2, spec.name, spec.region).ensure(
            ctx, layout, spec.instance_type, spec.count)
        await save_facts(self.app, spec.name, network=net)
        return {"vpc_id": net["vpc_id"], "compute_subnet": net["compute_subnet"]}

    async def eks(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        net = (await facts_of(self.app, spec.name))["network"]
        eks = self.cloud.aws.eks
        role = await ensure_role(self.cloud.aws.iam, spec.name,
                                 role_names(spec.name, spec.region)["eks"],
                                 "eks.amazonaws.com", eks_cluster_policies(spec.region))
        token = ctx.client_token()
        in_flight = ctx.phase_name in IN_FLIGHT and ctx.checkpoint.get("client_token") == token
        existing: dict[str, Any] | None = (None if in_flight
                                           else await eks.describe_cluster(spec.name))
        if existing is None:
            async def create(subnets: list[str], attempt: int) -> dict[str, Any]:
                # a refused request created nothing; a new subnet set gets its own token
                once = token if attempt == 0 else f"{token}-az{attempt}"
                return await while_iam_propagates(ctx, role, lambda: eks.create_cluster(
                    spec.name, role, subnets,
                    [net["security_group"]], version=KUBERNETES_VERSION, client_token=once,
                    accessConfig={"authenticationMode": "API_AND_CONFIG_MAP",
                                  "bootstrapClusterCreatorAdminPermissions": True},
                    tags={CLUSTER_TAG: spec.name, MANAGED_TAG: "true"}))

            async def submit() -> dict[str, Any]:
                made = await create_in_supported_azs(ctx, self.cloud, spec.name, spec.region,
                                                     net, create)
                return {"arn": made["arn"]}  # what the checkpoint keeps (JSON-safe)

            existing = await mutate_once(
                ctx, token=token, poll_every=EKS_POLL, submit=submit, timeout=EKS_DEADLINE,
                what=f"EKS cluster {spec.name}",
                inspect=lambda: eks.describe_cluster(spec.name),
                done=_eks_settled)
        assert existing is not None
        existing = await _until_settled(ctx, eks, spec.name, existing)
        if existing["status"] == "FAILED":
            raise CloudError(f"EKS cluster {spec.name} failed to create.", code="eks_failed",
                             hint="Check the EKS console's health issues, delete the cluster, "
                             "then retry this step.")
        await save_facts(self.app, spec.name, eks_arn=existing["arn"],
                         control_plane=await used_subnets(self.cloud, spec.name, spec.region,
                                                          net["vpc_id"], existing))
        return {"eks_arn": existing["arn"], "eks_status": existing["status"]}

    async def access(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        aws = self.cloud.aws
        await ctx.phase("identity")
        account = str((await aws.sts.caller_identity())["Account"])
        bucket = shared_bucket(spec.name, account, spec.region)
        hp_role = await ensure_role(
            aws.iam, spec.name, role_names(spec.name, spec.region)["hyperpod"],
            "sagemaker.amazonaws.com", execution_role_policies(spec.region),
            inline=execution_role_inline(spec.region, account, bucket, LIFECYCLE_PREFIX))
        await ensure_bucket(aws.s3, spec.name, bucket, spec.region)
        lifecycle = await ensure_lifecycle_script(aws.s3, bucket)
        await save_facts(self.app, spec.name, hyperpod_role=hp_role, bucket=bucket,
                         lifecycle_uri=lifecycle)
        return {"hyperpod_role": hp_role, "bucket": bucket, "lifecycle_uri": lifecycle}

    async def dependencies(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        return await cluster_deps.reconcile(ctx, self.cloud, spec.name, "cluster")

    async def hyperpod(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        facts = await facts_of(self.app, spec.name)
        cluster = await cluster_hyperpod.ensure(ctx, self.cloud, spec, facts)
        await set_hyperpod_name(self.app, spec.name, spec.name)
        return {"hyperpod_arn": cluster["ClusterArn"], "status": cluster["ClusterStatus"],
                "node_recovery": cluster.get("NodeRecovery"), "instance_group": FIRST_GROUP}

    async def node_dependencies(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        facts = await facts_of(self.app, spec.name)
        return await cluster_deps.reconcile(ctx, self.cloud, spec.name, "nodes",
                                            bucket=facts.get("bucket"))

    async def storage(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        facts = await facts_of(self.app, spec.name)
        return await cluster_deps.ensure_storage(ctx, self.cloud, spec.name, facts["bucket"],
                                                 spec.region)

    async def verify(self, ctx: StepContext) -> dict[str, Any]:
        spec = spec_from(ctx.params["spec"])
        result = await verify_cluster(ctx, self.cloud, spec.name, spec.count)
        bucket = (await facts_of(self.app, spec.name))["bucket"]
        result.update(await mount_check.run(ctx, self.cloud, spec.name, bucket))
        await set_state(self.app, spec.name, "active")
        return result


async def _until_settled(ctx: StepContext, eks: EksPort, name: str,
                         seen: dict[str, Any]) -> dict[str, Any]:
    """Poll a found cluster until ACTIVE or FAILED, on fresh answers only: one that vanished
    fails the step (a stale answer kept would poll forever), and so does the deadline."""
    waited = 0.0
    while seen["status"] not in ("ACTIVE", "FAILED"):
        if waited > EKS_DEADLINE:
            raise CloudError(f"EKS cluster {name} is still {seen['status']} after "
                             f"{waited:.0f} s.", code="wait_timed_out",
                             hint="Check the cluster in the EKS console; retry this step to "
                             "wait again.")
        if ctx.phase_name != "polling":
            await ctx.phase("polling")
        await ctx.sleep(EKS_POLL)
        waited += EKS_POLL
        fresh = await eks.describe_cluster(name)
        if fresh is None:
            raise CloudError(f"EKS cluster {name} disappeared while it was {seen['status']}.",
                             code="eks_gone", hint="Someone deleted it; retry this step to "
                             "create it again.")
        seen = fresh
    return seen


def _eks_settled(cluster: dict[str, Any] | None) -> bool:
    return cluster is not None and cluster["status"] in ("ACTIVE", "FAILED")

