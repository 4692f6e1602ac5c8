"""Durable job mutations, each a workflow of named steps (step names are stored: never rename):

- job.submit: `apply` the recipe's scripts ConfigMap (if any: services/jobs/scripts.py), the
  rendered manifest, then the ConfigMap again owned by the job (server-side apply: running it
  again after a crash changes nothing), then `admitted` waits until the job's operator has
  taken it (its first status condition), so an operator that is not running fails the
  operation clearly.
- job.cancel: `suspend` sets runPolicy.suspend (both training operators' own switch; a
  RayJob's spec.suspend), `stopped` waits until no pod of the job is left running.
- job.delete: `delete` the job (its pods and scripts ConfigMap go with it: owner references;
  the ConfigMap is also deleted by name), `gone` waits for it.
"""

from __future__ import annotations

import contextlib
from typing import Any

from podplane.domain.errors import CloudError, NotFound
from podplane.domain.jobs.kinds import KINDS, NAMESPACE, RAY
from podplane.domain.jobs.render import Facts, manifest_from
from podplane.domain.jobs.requests import restored
from podplane.domain.jobs.workloads import workload_of
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud
from podplane.services.jobs import ray, scripts

SUBMIT, CANCEL, DELETE = "job.submit", "job.cancel", "job.delete"
POLL_SECONDS = 5.0
ADMIT_SECONDS = 300.0
STOP_SECONDS = 600.0
Shape = dict[str, Any]


def declare(cloud: Cloud) -> list[Workflow]:
    s = JobSteps(cloud)
    return [
        Workflow.of(SUBMIT, ("apply", s.apply), ("admitted", s.admitted)),
        Workflow.of(CANCEL, ("suspend", s.suspend), ("stopped", s.stopped)),
        Workflow.of(DELETE, ("delete", s.delete), ("gone", s.gone)),
    ]


class JobSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def _kube(self, ctx: StepContext) -> Any:
        return await self.cloud.kube_for(scope.ClusterRef.of(ctx.params).eks)

    async def apply(self, ctx: StepContext) -> Shape:
        kube = await self._kube(ctx)
        request = restored(ctx.params["request"])
        manifest = manifest_from(request, Facts(**ctx.params["facts"]))
        chosen, job = workload_of(request).recipe, request.name
        await ctx.phase("applying")  # a crash point before and after the call (crash sweep)
        await scripts.apply(kube, chosen, job)  # first: its pods mount it
        applied = await kube.apply(manifest, force=True)
        await scripts.apply(kube, chosen, job, owner=applied)
        ctx.crash_point("after_call")
        return {"job": applied["metadata"]["name"], "kind": applied["kind"],
                "uid": applied["metadata"].get("uid")}

    async def admitted(self, ctx: StepContext) -> Shape:
        kube, job = await self._kube(ctx), ctx.params["job"]
        kind = KINDS[ctx.params["kind"]]
        waited = 0.0
        while True:
            found = await kube.get(kind.api_version, kind.kind, job, NAMESPACE)
            if found is None:
                raise CloudError(f"Job {job} disappeared before its operator took it.",
                                 code="job_gone", retryable=False)
            conds = (found.get("status") or {}).get("conditions") or []
            if conds:
                return {"conditions": [c.get("type") for c in conds]}
            if deployment := (found.get("status") or {}).get("jobDeploymentStatus"):
                return {"job_deployment_status": deployment}  # KubeRay's RayJob
            if waited >= ADMIT_SECONDS:
                raise CloudError(f"No operator took job {job} within {int(ADMIT_SECONDS)} s.",
                                 code="operator_not_running", retryable=True,
                                 hint=f"Is the {kind.kind} operator installed and running? "
                                 "(cluster dependencies); retry this step once it is.")
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def suspend(self, ctx: StepContext) -> Shape:
        kube, job = await self._kube(ctx), ctx.params["job"]
        kind = KINDS[ctx.params["kind"]]
        await ctx.phase("suspending")
        await kube.patch(kind.api_version, kind.kind, job, ray.SUSPEND if kind is RAY else {
            "spec": {"runPolicy": {"suspend": True}}}, namespace=NAMESPACE)
        ctx.crash_point("after_call")
        return {"suspended": job}

    async def stopped(self, ctx: StepContext) -> Shape:
        kube, job = await self._kube(ctx), ctx.params["job"]
        kind = KINDS[ctx.params["kind"]]
        waited = 0.0
        while True:
            pods = await ray.pods_by_name(kube, kind, job)
            running = [p["metadata"]["name"] for p in pods
                       if (p.get("status") or {}).get("phase") in ("Pending", "Running")
                       and not p["metadata"].get("deletionTimestamp")]
            if not running:
                return {"running_pods": 0}
            if waited >= STOP_SECONDS:
                raise CloudError(f"Pods of {job} still run after the suspension: "
                                 f"{', '.join(running)}.", code="job_not_stopped",
                                 retryable=True, hint="Is the operator running?")
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def delete(self, ctx: StepContext) -> Shape:
        kube, job = await self._kube(ctx), ctx.params["job"]
        kind = KINDS[ctx.params["kind"]]
        await ctx.phase("deleting")
        with contextlib.suppress(NotFound):  # already gone (a resumed step)
            await kube.delete(kind.api_version, kind.kind, job, namespace=NAMESPACE,
                              propagation="Background")
        await scripts.delete(kube, job)
        ctx.crash_point("after_call")
        return {"deleted": job}

    async def gone(self, ctx: StepContext) -> Shape:
        kube, job = await self._kube(ctx), ctx.params["job"]
        kind = KINDS[ctx.params["kind"]]
        waited = 0.0
        while await kube.get(kind.api_version, kind.kind, job, NAMESPACE) is not None or \
                await ray.pods_by_name(kube, kind, job):
            if waited >= STOP_SECONDS:
                raise CloudError(f"Job {job} is still there after its deletion.",
                                 code="job_not_deleted", retryable=True)
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS
        return {"gone": job}
