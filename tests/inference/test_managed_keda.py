"""A managed endpoint's own autoscaling moves its replicas in the sandbox: the operator's
ScaledObject queries the cluster's Prometheus workspace (what the observability add-on writes)
for `sum(vllm:num_requests_running{model_name=...})`; load on the operator's Service raises the
Deployment to its maximum, and it goes back after the scale-down window, in virtual minutes.
Read back with the Kubernetes API (the Deployment, KEDA's HPA)."""

from __future__ import annotations

from typing import Any

from podplane.services.cloud_access import cloud_of
from podplane_sandbox.kube.fake_engine import engines_of
from tests.features.conftest import BASE, BUCKET
from tests.groups.conftest import CLUSTER, FIRST_GROUP, Cluster, finish
from tests.groups.conftest import cluster as group_cluster  # noqa: F401 - fixture reuse
from tests.inference.conftest import settle
from tests.inference.test_managed_endpoints import (
    URL,
    feature_cluster,  # noqa: F401
)
from tests.inference.test_managed_mcp_flow import operator_on_two_nodes

AUTO = {"min_replicas": 1, "max_replicas": 2, "metric": "running", "target": 4,
        "cooldown_seconds": 120}


async def _on(client: Any, feature: str) -> None:
    r = await client.patch(f"{BASE}/{feature}", json={"enabled": True})
    assert r.status_code == 202, r.text
    assert (await finish(client, r.json()))["status"] == "succeeded", feature


async def _replicas(cluster: Cluster) -> tuple[int, int]:
    """(the operator's Deployment spec.replicas, KEDA's HPA desiredReplicas)."""
    settle(cluster.stack)
    kube = await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)
    dep = await kube.get("apps/v1", "Deployment", "llama", "default")
    hpa = await kube.get("autoscaling/v2", "HorizontalPodAutoscaler",
                         "keda-hpa-llama-scaledobject", "default")
    assert dep is not None and hpa is not None
    return int(dep["spec"]["replicas"]), int((hpa.get("status") or {}).get(
        "desiredReplicas") or 0)


def _load(cluster: Cluster, in_flight: int) -> None:
    store = cluster.stack.sandbox.kube.get(CLUSTER).store
    engines_of(store).set_load("default", "llama", in_flight)


async def test_load_moves_a_managed_endpoint(feature_cluster: Cluster) -> None:  # noqa: F811
    cluster = feature_cluster
    await operator_on_two_nodes(cluster)
    async with cluster.stack.client("operator") as client:
        for feature in ("keda", "hyperpod-observability"):
            await _on(client, feature)
        made = await client.post(URL, json={
            "name": "llama", "instance_group": FIRST_GROUP, "kind": "managed",
            "model": f"s3://{BUCKET}/models/llama/", "autoscaling": AUTO})
        assert made.status_code == 202, made.text
        assert (await finish(client, made.json()))["status"] == "succeeded"
    settle(cluster.stack, 30)
    assert await _replicas(cluster) == (1, 1)

    _load(cluster, 20)   # 20 running on one pod; target 4 per pod -> 5, capped at 2
    for _ in range(3):
        settle(cluster.stack, 15)
    assert await _replicas(cluster) == (2, 2)

    _load(cluster, 0)
    settle(cluster.stack, 120)
    assert (await _replicas(cluster))[0] == 2   # inside the scale-down window
    for _ in range(14):
        settle(cluster.stack, 15)
    assert await _replicas(cluster) == (1, 1)
