"""The NCCL test's workflow, `diagnose.nccl` (step names are stored: never rename one):

- all_nodes: one all-reduce across every chosen node; its table read from rank 0's log.
- pairs: when that is below the pass figure and there are three or more nodes, all-reduces
  on neighbouring pairs (domain/diagnostics/nccl.py says how they name the slow node).
- cleanup: every workload this operation made is deleted and gone (also those a crash left).
- verdict: the figures judged (pure), stored in the operation's result.

Each run deletes its workload when it ends, whether it passed, failed or was cancelled
(`finally`); `cleanup` catches what a killed process could not delete, and a resumed step
applies the same manifest again (server-side apply).
"""

from __future__ import annotations

import contextlib
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.diagnostics import nccl as rules
from podplane.domain.diagnostics import nccl_workload as wl
from podplane.domain.errors import CloudError, NotFound
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud

KIND = "diagnose.nccl"
POLL_SECONDS = 5.0
RUN_SECONDS = wl.DEADLINE_SECONDS + 60.0
GONE_SECONDS = 300.0
MAX_LOG_LINES = 2000
Shape = dict[str, Any]


def declare(cloud: Cloud) -> list[Workflow]:
    s = NcclSteps(cloud)
    return [Workflow.of(KIND, ("all_nodes", s.all_nodes), ("pairs", s.pairs),
                        ("cleanup", s.cleanup), ("verdict", s.verdict))]


class NcclSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def _kube(self, ctx: StepContext) -> KubePort:
        return await self.cloud.kube_for(scope.ClusterRef.of(ctx.params).eks)

    async def all_nodes(self, ctx: StepContext) -> Shape:
        nodes = list(ctx.params["nodes"])
        (measured,) = await self._run(ctx, [("all", nodes)])
        return {"nodes": nodes, "measured": measured}

    async def pairs(self, ctx: StepContext) -> Shape:
        want = rules.expected(ctx.params["instance_type"])
        busbw = ctx.results["measured"]["busbw"]
        pairs = rules.ring_pairs(list(ctx.params["nodes"]))
        if want is None or not pairs or (busbw is not None and busbw >= want.threshold):
            return {"pairs": []}
        out = []
        for b, batch in enumerate(rules.batches(pairs)):
            runs = [(f"p{b}-{i}", list(pair)) for i, pair in enumerate(batch)]
            for (_, pair), measured in zip(runs, await self._run(ctx, runs), strict=True):
                out.append({"nodes": pair, "busbw": measured["busbw"]})
        return {"pairs": out}

    async def cleanup(self, ctx: StepContext) -> Shape:
        kube = await self._kube(ctx)
        mine = {wl.OPERATION_LABEL: ctx.op_id}
        await ctx.phase("deleting")
        for job in await kube.list(wl.API_VERSION, wl.KIND, namespace=wl.NAMESPACE,
                                   labels=mine):
            await _delete(kube, job["metadata"]["name"])
        ctx.crash_point("after_call")
        waited = 0.0
        while await kube.list(wl.API_VERSION, wl.KIND, namespace=wl.NAMESPACE, labels=mine) \
                or await kube.list("v1", "Pod", namespace=wl.NAMESPACE, labels=mine):
            if waited >= GONE_SECONDS:
                raise CloudError("The NCCL test's workload is still there after its "
                                 "deletion.", code="nccl_not_deleted", retryable=True)
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS
        return {"left_behind": 0}

    async def verdict(self, ctx: StepContext) -> Shape:
        pairs = tuple(((p["nodes"][0], p["nodes"][1]), p["busbw"])
                      for p in ctx.results.get("pairs") or [])
        facts = rules.NcclFacts(
            scope.ClusterRef.of(ctx.params).name, tuple(ctx.params["nodes"]),
            ctx.params["instance_type"], dict(ctx.params["efa_allocatable"]),
            rules.measurement_of(ctx.results["measured"]), pairs)
        return {"verdict": rules.diagnose(facts).shape()}

    async def _run(self, ctx: StepContext, runs: list[tuple[str, list[str]]]) -> list[Shape]:
        """Apply one workload per run, wait for all, read each rank 0's table; the workloads
        are deleted whatever happens."""
        kube = await self._kube(ctx)
        names = [wl.job_name(ctx.op_id, r) for r, _ in runs]
        try:
            await ctx.phase("applying", jobs=names)
            for name, (_, nodes) in zip(names, runs, strict=True):
                where = wl.Placement(tuple(f"hyperpod-{n}" for n in nodes), ctx.params["gpus"],
                                     ctx.params["efa"])
                await kube.apply(wl.render(name, ctx.op_id, where), force=True)
            ctx.crash_point("after_call")
            await ctx.phase("running", jobs=names)
            return [await _measured(ctx, kube, name) for name in names]
        finally:
            for name in names:
                await _delete(kube, name)


async def _measured(ctx: StepContext, kube: KubePort, name: str) -> Shape:
    waited = 0.0
    while True:
        job = await kube.get(wl.API_VERSION, wl.KIND, name, wl.NAMESPACE)
        if job is None:
            raise CloudError(f"The NCCL test {name} disappeared.", code="nccl_test_gone")
        done = {c["type"]: c for c in (job.get("status") or {}).get("conditions") or []
                if c.get("status") == "True" and c.get("type") in ("Succeeded", "Failed")}
        if "Failed" in done:
            raise CloudError(f"The NCCL test {name} failed: {done['Failed'].get('message')}",
                             code="nccl_test_failed", hint="Read its pods' logs (the job "
                             "is deleted when the step ends) and the nodes' health.")
        if "Succeeded" in done:
            text = await _log(kube, f"{name}-master-0")
            return {**rules.parse(text).shape(), "job": name}
        if waited >= RUN_SECONDS:
            raise CloudError(f"The NCCL test {name} did not finish within "
                             f"{int(RUN_SECONDS)} s: {await _pending(kube, name)}",
                             code="nccl_test_timeout", retryable=True)
        await ctx.sleep(POLL_SECONDS)
        waited += POLL_SECONDS


async def _log(kube: KubePort, pod: str) -> str:
    lines = []
    async for line in kube.logs(pod, wl.NAMESPACE, container=wl.CONTAINER,
                                tail_lines=MAX_LOG_LINES):
        lines.append(line)
    return "\n".join(lines)


async def _pending(kube: KubePort, name: str) -> str:
    """Why pods wait, as the scheduler said it (PodScheduled False)."""
    pods = await kube.list("v1", "Pod", namespace=wl.NAMESPACE, labels={wl.JOB_LABEL: name})
    why = [f"{p['metadata']['name']}: {c.get('message')}" for p in pods
           for c in (p.get("status") or {}).get("conditions") or []
           if c.get("type") == "PodScheduled" and c.get("status") == "False"]
    return "; ".join(why) or "its pods are still running"


async def _delete(kube: KubePort, name: str) -> None:
    with contextlib.suppress(NotFound):
        await kube.delete(wl.API_VERSION, wl.KIND, name, namespace=wl.NAMESPACE,
                          propagation="Background")
