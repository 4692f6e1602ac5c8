"""cluster.delete: ordered teardown (HyperPod -> EKS -> network -> identity -> forget).

Only resources tagged `podplane:managed=true` are deleted unless the admin forces it; an
imported cluster is only detached unless `delete_resources` is set. The shared S3 bucket is
kept: it holds the users' data.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.errors import Conflict
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services.cloud_access import Cloud, engine_cloud
from podplane.services.clusters.ec2_waits import wait_until
from podplane.services.clusters.identity import delete_identity
from podplane.services.clusters.network import MANAGED_TAG
from podplane.services.clusters.network_teardown import NetworkTeardown
from podplane.services.context import AppState
from podplane.store import clusters as repo

KIND = "cluster.delete"
POLL = 30.0
DELETE_DEADLINE = 3600.0  # EKS and HyperPod delete in minutes; an hour means it is stuck


def declare(app: AppState) -> list[Workflow]:
    steps = DeleteSteps(app)
    return [Workflow.of(KIND, *((n, getattr(steps, n)) for n in
                                ("hyperpod", "eks", "network", "identity", "forget")))]


def _ours(tags: dict[str, str], force: bool, what: str) -> None:
    if tags.get(MANAGED_TAG) != "true" and not force:
        raise Conflict(f"{what} was not created by podplane; it is left in place.",
                       hint="An admin can delete it anyway with force=true.")


class DeleteSteps:
    def __init__(self, app: AppState) -> None:
        self.app = app

    @property
    def cloud(self) -> Cloud:
        return engine_cloud(self.app)

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
        tags = await hp.list_tags(found["ClusterArn"])
        _ours({t["Key"]: t["Value"] for t in tags}, ctx.params["force"],
              f"HyperPod cluster {name}")
        await ctx.phase("deleting")

        async def gone() -> bool:
            now = await hp.describe_cluster(name)  # fresh each time, never a kept answer
            if now is None:
                return True
            if now["ClusterStatus"] in ("Creating", "Updating", "SystemUpdating"):
                await ctx.note(f"waiting for {now['ClusterStatus']} to finish")
            elif now["ClusterStatus"] != "Deleting":
                await hp.delete_cluster(name)
            return False

        await wait_until(ctx, f"HyperPod cluster {name} to be deleted", gone,
                         timeout=DELETE_DEADLINE, every=POLL, code="delete_timed_out",
                         hint="Look at the cluster in the SageMaker console; retry this step "
                              "to wait again.")
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
        async def gone() -> bool:
            return await eks.describe_cluster(name) is None

        await wait_until(ctx, f"EKS cluster {name} to be deleted", gone,
                         timeout=DELETE_DEADLINE, every=POLL, code="delete_timed_out",
                         hint="Look at the cluster in the EKS console; retry this step to "
                              "wait again.")
        return {"eks": "deleted"}

    async def network(self, ctx: StepContext) -> dict[str, Any]:
        if await self._skip(ctx):
            return {}
        await ctx.phase("deleting")
        deleted = await NetworkTeardown(ctx, self.cloud.aws.ec2, ctx.params["name"]).run()
        return {"network_deleted": deleted}

    async def identity(self, ctx: StepContext) -> dict[str, Any]:
        if await self._skip(ctx):
            return {}
        await ctx.phase("deleting")  # a crash point before and after the IAM calls
        async with self.app.sessions() as db:
            row = await repo.get(db, ctx.params["name"])
        gone = await delete_identity(self.cloud.aws.iam, ctx.params["name"],
                                     row.region if row is not None else None)
        ctx.crash_point("after_call")
        return {"roles_deleted": gone, "bucket": "kept (holds data)"}

    async def forget(self, ctx: StepContext) -> dict[str, Any]:
        async with self.app.sessions.begin() as db:
            await repo.remove(db, ctx.params["name"])
        return {"forgotten": ctx.params["name"]}
