"""The verify step: nodes Ready with HyperPod labels, add-ons ACTIVE, the health agent running."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort, Manifest
from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.errors import CloudError
from podplane.domain.manifests.health import AGENT_DAEMONSETS, NAMESPACE
from podplane.ops.context import StepContext
from podplane.services.cloud_access import Cloud

POLL = 10.0
ATTEMPTS = 30
CLUSTER_LABEL = "sagemaker.amazonaws.com/cluster-name"


def ready(node: Manifest) -> bool:
    conds = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


async def observe(cloud: Cloud, name: str) -> dict[str, Any]:
    kube = await cloud.kube_for(name)
    nodes = await kube.list("v1", "Node", labels={CLUSTER_LABEL: name})
    agents = await _agents(kube)
    addons = {}
    for unit in CORE_UNITS:
        if unit.kind == "eks-addon":
            found = await cloud.aws.eks.describe_addon(name, unit.name) or {}
            addons[unit.name] = found.get("status", "MISSING")
    return {"nodes": len(nodes), "nodes_ready": sum(1 for n in nodes if ready(n)),
            "health_agent_ready": sum(a[0] for a in agents.values()),
            "health_agent_desired": sum(max(a[1], 0) for a in agents.values()),
            "health_agent_missing": sorted(n for n, a in agents.items() if a[1] < 0),
            "addons": addons}


async def _agents(kube: KubePort) -> dict[str, tuple[int, int]]:
    """(ready, desired) per health-agent DaemonSet (GPU and Neuron; -1 desired: missing).

    Each one runs only on its instance types (HyperPod chart affinity), so a CPU-only cluster
    rightly wants 0 agents."""
    out = {}
    for name in AGENT_DAEMONSETS:
        found = await kube.get("apps/v1", "DaemonSet", name, NAMESPACE)
        status = (found or {}).get("status") or {}
        out[name] = (int(status.get("numberReady", 0)),
                     int(status.get("desiredNumberScheduled", 0)) if found else -1)
    return out


def problems(seen: dict[str, Any], count: int) -> list[str]:
    out = []
    if seen["nodes_ready"] < count:
        out.append(f"{seen['nodes_ready']}/{count} nodes Ready")
    if seen["health_agent_missing"]:
        out.append("health agent DaemonSet missing: " + ", ".join(seen["health_agent_missing"]))
    elif seen["health_agent_ready"] < seen["health_agent_desired"]:
        out.append(f"health agent ready on {seen['health_agent_ready']}/"
                   f"{seen['health_agent_desired']} nodes")
    out += [f"add-on {n} is {s}" for n, s in seen["addons"].items() if s != "ACTIVE"]
    return out


async def verify_cluster(ctx: StepContext, cloud: Cloud, name: str, count: int) -> dict[str, Any]:
    await ctx.phase("checking")
    for _ in range(ATTEMPTS):
        seen = await observe(cloud, name)
        missing = problems(seen, count)
        if not missing:
            return seen
        await ctx.sleep(POLL)
    raise CloudError("The cluster is not healthy yet: " + "; ".join(missing) + ".",
                     code="verify_failed", retryable=False,
                     hint="Look at the nodes (kubectl get nodes) and kube-system pods, then "
                     "retry the verify step.")
