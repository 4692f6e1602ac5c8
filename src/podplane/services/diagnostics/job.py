"""Diagnose a training job: the job, its pods, their nodes and the events about them, read
as `job_get` reads them (services/jobs/cluster.py), whether its pods went silent
(services/jobs/stall.py), and a bounded tail of each failed or restarted container's log,
judged by domain/diagnostics/job.py."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.diagnostics.job import JobFacts, diagnose
from podplane.domain.diagnostics.job_logs import PODS_READ, TAIL_LINES, PodLog
from podplane.domain.diagnostics.verdict import Verdict
from podplane.domain.effects import Effect
from podplane.domain.errors import PodplaneError
from podplane.domain.jobs.kinds import NAMESPACE
from podplane.domain.spaces.views import NAME_LABEL as SPACE_LABEL
from podplane.services import scope
from podplane.services.context import Ctx
from podplane.services.jobs import cluster as jc
from podplane.services.jobs.stall import stall_of
from podplane.services.registry import service

Shape = dict[str, Any]


@service(Effect.READ, "diagnose.job")
async def diagnose_job(ctx: Ctx, cluster: str, job: str) -> Verdict:
    _, kube = await scope.kube_of(ctx, cluster)
    found = await jc.find_job(kube, cluster, job)
    pods = await jc.pods_of(kube, found)
    events = await jc.events_of(kube, found, pods)
    nodes = await jc.nodes_by_name(kube)
    stall = await stall_of(kube, pods, ctx.app.settings.job_stall_seconds)
    logs = await failed_logs(kube, pods)
    return diagnose(JobFacts(cluster, found, tuple(pods), tuple(nodes.values()),
                             tuple(events), logs, stall, await spaces_holding_gpus(kube)))


async def spaces_holding_gpus(kube: KubePort) -> tuple[str, ...]:
    """Dev spaces whose unfinished pods request GPUs (docs/spaces.md): what a pending job
    waits for when they hold the group's GPUs."""
    pods = await kube.list("v1", "Pod", namespace=NAMESPACE)
    return tuple(sorted({p["metadata"]["labels"][SPACE_LABEL] for p in pods
                         if SPACE_LABEL in (p["metadata"].get("labels") or {})
                         and scope.requested_gpus(p) > 0
                         and (p.get("status") or {}).get("phase") not in ("Succeeded",
                                                                           "Failed")}))


def _ended_runs(pod: Shape) -> list[tuple[str, bool]]:
    """(container, previous) for each run that ended badly: a terminated container with a
    non-zero exit (its current log), or one that restarted after one (its previous log)."""
    out = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        state, last = cs.get("state") or {}, (cs.get("lastState") or {}).get("terminated")
        now = state.get("terminated")
        if now and int(now.get("exitCode") or 0) != 0:
            out.append((str(cs.get("name")), False))
        elif last and int(last.get("exitCode") or 0) != 0:
            out.append((str(cs.get("name")), True))
    return out


async def failed_logs(kube: KubePort, pods: list[Shape]) -> tuple[PodLog, ...]:
    """The last TAIL_LINES of each badly ended run, for at most PODS_READ pods. A log that
    cannot be read (the node is gone, the kubelet rotated it) is noted, not fatal."""
    out: list[PodLog] = []
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        runs = _ended_runs(pod)
        if not runs or len(out) >= PODS_READ:
            continue
        name, node = pod["metadata"]["name"], (pod.get("spec") or {}).get("nodeName")
        for container, previous in runs[:1]:
            try:
                lines = tuple([line async for line in kube.logs(
                    name, NAMESPACE, container=container, tail_lines=TAIL_LINES,
                    previous=previous)])
                out.append(PodLog(name, node, container, previous, lines))
            except PodplaneError as err:
                out.append(PodLog(name, node, container, previous, error=err.message))
    return tuple(out)
