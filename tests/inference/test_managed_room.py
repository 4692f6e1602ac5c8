"""GPU room for a managed endpoint, read back with the Kubernetes API: with every GPU of its
instance type in use, a scale up and an update (its rollout starts one more pod) are 409
`insufficient_gpus` and change nothing (the config's spec and resourceVersion stay, no
operation starts); once the group grew, the plan counts the free GPU. A config the operator
autoscales refuses a manual scale (409) and an autoscaling update (422)."""

from __future__ import annotations

from typing import Any

import httpx

from podplane.domain.inference import managed
from podplane.services.cloud_access import cloud_of
from tests.groups.conftest import CLUSTER, Cluster
from tests.groups.conftest import cluster as group_cluster  # noqa: F401 - fixture reuse
from tests.inference.test_managed_endpoints import (
    URL,
    feature_cluster,  # noqa: F401
)
from tests.inference.test_managed_operations import NEW, deployed, grow

AUTOSCALING = {"minReplicaCount": 1, "maxReplicaCount": 2, "cooldownPeriod": 300}


async def _config(cluster: Cluster) -> dict[str, Any]:
    kube = await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)
    found = await kube.get(managed.API_VERSION, managed.KIND, "llama", "default")
    assert found is not None
    return found


async def _operations(client: httpx.AsyncClient) -> int:
    r = await client.get("/api/v1/operations")
    assert r.status_code == 200, r.text
    body = r.json()
    return len(body["items"] if isinstance(body, dict) else body)


async def test_scale_and_update_need_free_gpus(feature_cluster: Cluster) -> None:  # noqa: F811
    cluster = feature_cluster
    await deployed(cluster)   # llama: one pod, one GPU: the group's only GPU
    before = await _config(cluster)
    async with cluster.stack.client("operator") as client:
        count = await _operations(client)
        scaled = await client.patch(f"{URL}/llama", json={"replicas": 2})
        assert scaled.status_code == 409, scaled.text
        assert scaled.json()["code"] == "insufficient_gpus", scaled.text
        assert "ml.g5.8xlarge" in scaled.json()["detail"], scaled.text
        updated = await client.patch(f"{URL}/llama", json={"image": NEW})
        assert updated.status_code == 409, updated.text
        assert updated.json()["code"] == "insufficient_gpus", updated.text
        assert await _operations(client) == count
        after = await _config(cluster)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert after["spec"] == before["spec"]

        grow(cluster, 2)
        plan = await client.patch(f"{URL}/llama", params={"dry_run": "true"},
                                  json={"replicas": 2})
        assert plan.status_code == 200, plan.text
        assert plan.json()["plan"]["gpus_free"] == 1, plan.text
        three = await client.patch(f"{URL}/llama", json={"replicas": 3})
        assert three.status_code == 409, three.text   # two more pods, one free GPU

        await _autoscaled(cluster, client)


async def _autoscaled(cluster: Cluster, client: httpx.AsyncClient) -> None:
    kube = await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)
    await kube.patch(managed.API_VERSION, managed.KIND, "llama",
                     {"spec": {"autoScalingSpec": AUTOSCALING}}, namespace="default")
    scaled = await client.patch(f"{URL}/llama", json={"replicas": 2})
    assert scaled.status_code == 409 and "autoscaled" in scaled.json()["detail"], scaled.text
    bounds = await client.patch(f"{URL}/llama", json={"autoscaling": {
        "min_replicas": 1, "max_replicas": 3}})
    assert bounds.status_code == 422 and bounds.json()["field"] == "autoscaling", bounds.text
    assert (await _config(cluster))["spec"]["replicas"] == 1
