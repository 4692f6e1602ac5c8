"""Diagnose a training job: the job, its pods, their nodes and the events about them, read
as `job_get` reads them (services/jobs/cluster.py), judged by domain/diagnostics/job.py."""

from __future__ import annotations

from podplane.domain.diagnostics.job import JobFacts, diagnose
from podplane.domain.diagnostics.verdict import Verdict
from podplane.domain.effects import Effect
from podplane.services.context import Ctx
from podplane.services.jobs import cluster as jc
from podplane.services.registry import service


@service(Effect.READ, "diagnose.job")
async def diagnose_job(ctx: Ctx, cluster: str, job: str) -> Verdict:
    _, kube = await jc.kube_of(ctx, cluster)
    found = await jc.find_job(kube, cluster, job)
    pods = await jc.pods_of(kube, found)
    events = await jc.events_of(kube, found, pods)
    nodes = await jc.nodes_by_name(kube)
    return diagnose(JobFacts(cluster, found, tuple(pods), tuple(nodes.values()),
                             tuple(events)))
