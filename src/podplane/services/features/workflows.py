"""The durable workflow behind every feature change: apply the plan, then verify.

`apply` observes afresh and carries out what still differs (so a resumed or retried step
repeats no mutation that already landed); `verify` waits for the operators to be available
and fails if anything still departs from desired.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.errors import CloudError
from podplane.domain.features.catalog import FSX_LUSTRE, HYPERPOD_OBSERVABILITY
from podplane.domain.features.model import FeaturePlan
from podplane.domain.features.render import ClusterFacts
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services.cloud_access import Cloud
from podplane.services.features.apply import carry_out
from podplane.services.features.live import Live
from podplane.services.features.state import Desired, plan_for, rendered

FEATURE_SET = "feature.set"
# Features whose resources name what an earlier step made (rendered afresh before each step).
LIVE_RENDERED = (FSX_LUSTRE, HYPERPOD_OBSERVABILITY)
Shape = dict[str, Any]
POLL_SECONDS = 10.0
READY_DEADLINE = 15 * 60.0


def declare(cloud: Cloud) -> list[Workflow]:
    s = FeatureSteps(cloud)
    return [Workflow.of(FEATURE_SET, ("apply", s.apply), ("verify", s.verify))]


def _inputs(cloud: Cloud, params: Shape) -> tuple[Live, str, Desired, ClusterFacts]:
    facts = ClusterFacts(**params["facts"])
    want = Desired(bool(params["enabled"]), dict(params["settings"]), True)
    return Live(cloud, facts.hyperpod, facts.eks, facts.name), params["feature"], want, facts


async def _carry_out(ctx: StepContext, live: Live, name: str, want: Desired,
                     facts: ClusterFacts, found: FeaturePlan) -> list[str]:
    for step, res in found.steps:
        if name in LIVE_RENDERED:   # e.g. the PV names the file system made a step ago
            live.forget()
            res = {r.key: r for r in await rendered(live, name, want, facts)}[res.key]
        await carry_out(ctx, live, facts, step.verb, res)
        # Each action is its own point: a step resumed after a crash plans again from what
        # the cloud shows, so what landed is not done twice (the crash sweep's case).
        await ctx.phase(f"{step.verb} {step.key}")
    return [f"{s.verb} {s.key}" for s, _ in found.steps]


class FeatureSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def apply(self, ctx: StepContext) -> Shape:
        live, name, want, facts = _inputs(self.cloud, ctx.params)
        found = await plan_for(live, name, want, facts)
        await ctx.phase("applying", actions=[f"{s.verb} {s.key}" for s, _ in found.steps])
        applied = await _carry_out(ctx, live, name, want, facts, found)
        if name in LIVE_RENDERED:
            # what names a resource made above (the PV, a re-made file system) is known only
            # now: one more round carries out what that reveals
            live.forget()
            applied += await _carry_out(ctx, live, name, want, facts,
                                        await plan_for(live, name, want, facts))
        return {"applied": applied, "left_alone": found.left_alone}

    async def verify(self, ctx: StepContext) -> Shape:
        live, name, want, facts = _inputs(self.cloud, ctx.params)
        for _ in range(int(READY_DEADLINE / POLL_SECONDS)):
            live.forget()
            found = await plan_for(live, name, want, facts)
            waiting = await self._unavailable(live, name, want, facts)
            if found.empty and not waiting:
                return {"observed": "enabled" if want.enabled else "disabled"}
            await ctx.sleep(POLL_SECONDS)
        still = found.drift() + [f"{w} is not available" for w in waiting]
        raise CloudError(f"{name} did not settle: " + "; ".join(still) + ".",
                         code="feature_not_settled", retryable=False,
                         hint="Retry the verify step, or inspect the objects named above "
                         "(kubectl describe).")

    async def _unavailable(self, live: Live, name: str, want: Desired, facts: ClusterFacts
                           ) -> list[str]:
        if not want.enabled:
            return []
        out = []
        for res in await rendered(live, name, want, facts):
            if res.kind != "kube" or not res.present:
                continue
            kind = res.desired["kind"]
            if kind in ("Deployment", "PersistentVolumeClaim"):
                status = ((await live.seen(res)).live or {}).get("status") or {}
                if not (status.get("availableReplicas") if kind == "Deployment"
                        else status.get("phase") == "Bound"):
                    out.append(res.key)
        return out
