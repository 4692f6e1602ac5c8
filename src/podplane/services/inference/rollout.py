"""endpoint.update after its `apply`: follow the rolling update, send one real request through
the Service, and roll back to the previous template when either failed (step names are stored:
never rename):

- `rollout` waits until every pod runs the new template and is Ready, the old ones gone. The
  Deployment rolls one new pod at a time and stops an old one only once a new one is Ready
  (render.py's strategy), so the old pods serve meanwhile. It gives up when a new pod stays in
  a waiting state that needs a person (an image that cannot pull, a crash loop) for
  STUCK_SECONDS, or after READY_SECONDS; it records why rather than failing, so `rollback`
  runs.
- `smoke` sends one completion through the API server's service proxy (every pod behind the
  Service is new by then) and records the answer.
- `rollback` does nothing when both passed. Otherwise it applies the Deployment as it was
  before the update (stored in the operation's params), waits until the previous template
  serves again, and fails the operation saying why.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError
from podplane.domain.inference import managed as managed_config
from podplane.domain.inference.render import NAMESPACE, deployment, service
from podplane.domain.inference.views import engine_container, pod_ready
from podplane.ops.context import StepContext
from podplane.services.inference import cluster as ic
from podplane.services.inference import managed

Shape = dict[str, Any]
POLL_SECONDS = 10.0
READY_SECONDS = 1800.0
# Kubernetes docs, "Images" (ImagePullBackOff): kubelet retries a failed pull with a back-off
# capped at 300 s; a pod still waiting after that long needs a person, not more time.
STUCK_SECONDS = 300.0
STUCK = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CrashLoopBackOff",
                   "CreateContainerConfigError", "CreateContainerError"})
SMOKE_PROMPT = "podplane smoke test: say something"


def _runs(pod: Shape, container: Shape) -> bool:
    """The pod runs this engine container (same image and arguments)."""
    mine = engine_container(pod)
    return (mine.get("image"), mine.get("args")) == (container.get("image"),
                                                      container.get("args"))


def _stuck(pods: list[Shape]) -> list[Shape]:
    return [p for p in pods if any(
        ((c.get("state") or {}).get("waiting") or {}).get("reason") in STUCK
        for c in (p.get("status") or {}).get("containerStatuses") or [])]


async def _why(kube: KubePort, pods: list[Shape]) -> str:
    """Each pod's waiting reason with kubelet's last warning about it (the pull error)."""
    out = []
    for p in pods:
        name = p["metadata"]["name"]
        reasons = [((c.get("state") or {}).get("waiting") or {}).get("reason")
                   for c in (p.get("status") or {}).get("containerStatuses") or []]
        events = await kube.list("v1", "Event", namespace=NAMESPACE,
                                 fields={"involvedObject.name": name})
        warnings = [str(e.get("message")) for e in events if e.get("type") == "Warning"
                    and e.get("reason") == "Failed"  # "Error: ErrImagePull" only repeats it
                    and not str(e.get("message")).startswith("Error: ")]
        what = ", ".join(r for r in reasons if r) or "not Ready"
        out.append(f"{name}: {what}" + (f" ({warnings[-1]})" if warnings else ""))
    return "; ".join(out) or "no pod of the new template was created"


async def follow(ctx: StepContext, kube: KubePort, name: str, container: Shape,
                 wanted: int, pods_of: Any = ic.pods_of) -> str | None:
    """Wait until exactly `wanted` pods run `container`, all Ready, and no other pod is left:
    None, or why it did not happen."""
    waited = stuck_for = 0.0
    while True:
        pods = await pods_of(kube, name)
        staying = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        new = [p for p in staying if _runs(p, container)]
        if len(new) == len(pods) == wanted and all(pod_ready(p) for p in new):
            return None
        stuck = _stuck(new)
        stuck_for = stuck_for + POLL_SECONDS if stuck else 0.0
        if stuck_for > STUCK_SECONDS or waited >= READY_SECONDS:
            ready = sum(1 for p in new if pod_ready(p))
            return (f"{ready} of {wanted} new pod(s) Ready after {int(waited)} s: "
                    f"{await _why(kube, stuck or [p for p in new if not pod_ready(p)])}")
        await ctx.sleep(POLL_SECONDS)
        waited += POLL_SECONDS


def _answer_text(answer: Any) -> str:
    choices = answer.get("choices") if isinstance(answer, dict) else None
    first = (choices or [{}])[0] if isinstance(choices, list) else {}
    return str(first.get("text") or (first.get("message") or {}).get("content") or "")


def _new_container(params: Shape) -> Shape:
    if params.get("managed"):   # the operator runs the config's worker as it is
        return managed_config.container(params["manifest"])
    return engine_container(deployment(params["request"])["spec"]["template"])


def _old_container(params: Shape) -> Shape:
    if params.get("managed"):
        return managed_config.container(params["previous"])
    return engine_container(params["previous"]["spec"]["template"])


def _pods_of(params: Shape) -> Any:
    return managed.pods_of if params.get("managed") else ic.pods_of


def _port(params: Shape) -> int:
    if params.get("managed"):
        return int(params["manifest"]["spec"]["worker"]["modelInvocationPort"]["containerPort"])
    return int(service(params["request"])["spec"]["ports"][0]["port"])


class RolloutSteps:
    def __init__(self, kube_for: Any) -> None:
        self._kube = kube_for  # async (StepContext) -> KubePort

    async def rollout(self, ctx: StepContext) -> Shape:
        kube, name = await self._kube(ctx), ctx.params["endpoint"]
        container = _new_container(ctx.params)
        await ctx.phase("following")  # a crash point: a resumed wait starts over, harmlessly
        why = await follow(ctx, kube, name, container, int(ctx.params["replicas"]),
                           _pods_of(ctx.params))
        return {"rollout": {"ok": why is None, **({"reason": why} if why else {})}}

    async def smoke(self, ctx: StepContext) -> Shape:
        if not (ctx.results.get("rollout") or {}).get("ok"):
            return {"smoke": {"ok": False, "skipped": "the rollout failed"}}
        if int(ctx.params["replicas"]) == 0:
            return {"smoke": {"ok": True, "skipped": "no replica to ask (replicas=0)"}}
        kube, name = await self._kube(ctx), ctx.params["endpoint"]
        payload = {"model": name, "prompt": SMOKE_PROMPT, "max_tokens": 8}
        await ctx.phase("asking")
        status, answer = await kube.proxy("POST", NAMESPACE, name, _port(ctx.params),
                                          "v1/completions", payload)
        ctx.crash_point("after_call")  # asked again after a crash: one more small request
        text = _answer_text(answer)
        if status == 200 and text:
            return {"smoke": {"ok": True, "status": status, "text": text}}
        return {"smoke": {"ok": False, "status": status, "answer": str(answer)[:300]}}

    async def rollback(self, ctx: StepContext) -> Shape:
        rollout, smoke = ctx.results.get("rollout") or {}, ctx.results.get("smoke") or {}
        if rollout.get("ok") and smoke.get("ok"):
            return {"rolled_back": False}
        why = (f"the rollout failed: {rollout.get('reason')}" if not rollout.get("ok") else
               f"the smoke request answered {smoke.get('status')}: {smoke.get('answer')}")
        kube, name = await self._kube(ctx), ctx.params["endpoint"]
        previous, wanted = ctx.params["previous"], int(ctx.params["replicas"])
        await ctx.phase("rolling_back")
        await kube.apply({**previous, "spec": {**previous["spec"], "replicas": wanted}},
                         force=True)
        ctx.crash_point("after_call")
        back = await follow(ctx, kube, name, _old_container(ctx.params), wanted,
                            _pods_of(ctx.params))
        state = ("The previous version serves again" if back is None else
                 f"The previous version is not serving yet either: {back}")
        raise CloudError(f"Update of endpoint {name} rolled back: {why}. {state}.",
                         code="endpoint_update_failed", retryable=False,
                         hint="Fix the image, model or parallelism and update again; "
                         "endpoint_get shows each pod.")
