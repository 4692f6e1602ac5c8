"""The SGLang router's objects on a cluster (domain/inference/router.py renders them): refuse a
taken name, show the router pod, wait for it, delete exactly what podplane made."""

from __future__ import annotations

import contextlib
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
from podplane.domain.inference import router as rt
from podplane.domain.inference.errors import EndpointExists
from podplane.domain.inference.render import ENDPOINT_LABEL, NAMESPACE
from podplane.domain.inference.views import pod_ready
from podplane.domain.jobs.kinds import MANAGED_BY
from podplane.ops.context import StepContext

Shape = dict[str, Any]
POLL_SECONDS = 10.0
READY_SECONDS = 600.0   # a CPU image of a few hundred MB


async def refuse_taken(kube: KubePort, cluster: str, endpoint: str) -> None:
    """Any object of a router name, podplane's or not: never overwritten."""
    for api_version, kind, name in rt.taken_names(endpoint):
        if await kube.get(api_version, kind, name, NAMESPACE) is not None:
            raise EndpointExists(f"A {kind} named {name!r} already exists on {cluster!r}.",
                                 hint="Choose another endpoint name, or delete that object.")


def _ours(obj: Shape | None, endpoint: str) -> bool:
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(MANAGED_BY) == "podplane" and labels.get(ENDPOINT_LABEL) == endpoint \
        and labels.get("app.kubernetes.io/component") == rt.ROUTER_COMPONENT


async def pods(kube: KubePort, endpoint: str) -> list[Shape]:
    return await kube.list("v1", "Pod", namespace=NAMESPACE, labels=rt.selector(endpoint))


async def view(kube: KubePort, endpoint: str, policy: str | None) -> list[Shape]:
    """The router's pods as endpoint get shows them (phase, node, Ready); none without one."""
    if not policy:
        return []
    found = await pods(kube, endpoint)
    return [{"name": p["metadata"]["name"],
             "phase": (p.get("status") or {}).get("phase", "Pending"),
             "node": (p.get("spec") or {}).get("nodeName"), "ready": pod_ready(p)}
            for p in sorted(found, key=lambda p: str(p["metadata"]["name"]))]


async def wait_ready(ctx: StepContext, kube: KubePort, endpoint: str) -> int:
    """Until one router pod is Ready; else fail naming why (kubelet's waiting reason)."""
    waited = 0.0
    while True:
        found = await pods(kube, endpoint)
        if any(pod_ready(p) for p in found):
            return 1
        if waited >= READY_SECONDS:
            raise CloudError(f"The router of endpoint {endpoint} is not Ready after "
                             f"{int(READY_SECONDS)} s ({_why(found)}).",
                             code="endpoint_not_ready", retryable=False,
                             hint="Read endpoint_get (router pods), then retry this step.")
        await ctx.sleep(POLL_SECONDS)
        waited += POLL_SECONDS


def _why(found: list[Shape]) -> str:
    for p in found:
        for c in (p.get("status") or {}).get("containerStatuses") or []:
            reason = ((c.get("state") or {}).get("waiting") or {}).get("reason")
            if reason:
                return f"{p['metadata']['name']}: {reason}"
    return "no router pod" if not found else "not Ready"


async def delete(kube: KubePort, endpoint: str) -> list[str]:
    """The router's Deployment, RoleBinding, Role and ServiceAccount, each only when
    podplane's labels say it made it for this endpoint."""
    gone = []
    for api_version, kind, name in rt.taken_names(endpoint):
        if not _ours(await kube.get(api_version, kind, name, NAMESPACE), endpoint):
            continue
        with contextlib.suppress(NotFound):  # already gone (a resumed step)
            await kube.delete(api_version, kind, name, namespace=NAMESPACE,
                              propagation="Background")
        gone.append(f"{kind}/{name}")
    return gone
