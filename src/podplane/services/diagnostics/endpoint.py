"""Diagnose a self-managed inference endpoint: its Deployment, Service and pods as
`endpoint_get` reads them (services/inference/cluster.py), the events about them and the
previous run's last lines of each crashing engine, judged by domain/diagnostics/endpoint.py."""

from __future__ import annotations

from podplane.domain.diagnostics.endpoint import EndpointFacts, diagnose
from podplane.domain.diagnostics.verdict import Verdict
from podplane.domain.effects import Effect
from podplane.domain.inference.render import NAMESPACE
from podplane.services.context import Ctx
from podplane.services.diagnostics.job import failed_logs
from podplane.services.inference import cluster as ic
from podplane.services.inference import router as rsvc
from podplane.services.registry import service
from podplane.services.scope import kube_of


@service(Effect.READ, "diagnose.endpoint")
async def diagnose_endpoint(ctx: Ctx, cluster: str, name: str) -> Verdict:
    _, kube = await kube_of(ctx, cluster)
    dep, svc = await ic.find(kube, cluster, name)
    pods = await ic.pods_of(kube, name)
    names = {name, *(p["metadata"]["name"] for p in pods)}
    events = sorted((e for e in await kube.list("v1", "Event", namespace=NAMESPACE)
                     if (e.get("involvedObject") or {}).get("name") in names),
                    key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    logs = await failed_logs(kube, pods)
    routers = tuple(await rsvc.pods(kube, name))  # the Service's target with a router
    return diagnose(EndpointFacts(cluster, dep, svc, tuple(pods), tuple(events), logs,
                                  routers))
