"""A managed endpoint through the endpoints API, read back with the Kubernetes API: refused
(409, nothing created) while the inference-operator feature is off; with it on, create is an
operation that ends when the operator says DeploymentComplete, invoke answers through the
operator's Service, delete removes the config and what the operator made for it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from podplane.domain.inference import managed
from podplane.services.cloud_access import cloud_of
from podplane.services.clusters.state import save_facts
from tests.features.conftest import BUCKET
from tests.features.test_inference_operator import _enable, _prerequisites
from tests.groups.conftest import CLUSTER, FIRST_GROUP, Cluster, finish
from tests.groups.conftest import cluster as group_cluster  # noqa: F401 - fixture reuse

URL = f"/api/v1/clusters/{CLUSTER}/endpoints"
BODY = {"name": "llama", "instance_group": FIRST_GROUP, "kind": "managed",
        "model": f"s3://{BUCKET}/models/llama/", "exposure": "load_balancer"}


@pytest.fixture
async def feature_cluster(group_cluster: Cluster) -> AsyncIterator[Cluster]:  # noqa: F811
    await save_facts(group_cluster.stack.app.state.podplane, group_cluster.name, bucket=BUCKET)
    yield group_cluster


async def test_managed_endpoint_lifecycle(feature_cluster: Cluster) -> None:
    cluster = feature_cluster
    stack = cluster.stack
    kube = await cloud_of(stack.app.state.podplane).kube_for(CLUSTER)
    _prerequisites(cluster, "cert-manager", "aws-mountpoint-s3-csi-driver",
                   "aws-fsx-csi-driver")
    async with stack.client("operator") as client:
        count = len(stack.ledger())
        refused = await client.post(URL, json=BODY)
        assert refused.status_code == 409, refused.text
        assert "inference operator" in refused.json()["detail"]
        assert len(stack.ledger()) == count

    await _enable(cluster)
    async with stack.client("operator") as client:
        outside = await client.post(URL, json={**BODY, "model": f"s3://{BUCKET}/data/llama/"})
        assert outside.status_code == 422 and outside.json()["field"] == "model", outside.text
        made = await client.post(URL, json=BODY)
        assert made.status_code == 202, made.text
        assert made.json()["plan"]["manifests"][0]["kind"] == managed.KIND
        done = await finish(client, made.json())
        assert done["status"] == "succeeded", done
        config = await kube.get(managed.API_VERSION, managed.KIND, "llama", "default")
        assert config is not None and config["status"]["state"] == "DeploymentComplete"
        assert config["spec"]["modelSourceConfig"]["s3Storage"]["bucketName"] == BUCKET
        assert "loadBalancer" in config["spec"]

        answer = await client.post(f"{URL}/llama/invoke", json={"prompt": "hello"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["response"]["choices"]

    async with stack.client("admin") as admin:
        gone = await admin.delete(f"{URL}/llama", params={"confirm": "true"})
        assert gone.status_code == 202, gone.text
        assert (await finish(admin, gone.json()))["status"] == "succeeded"
    assert await kube.get(managed.API_VERSION, managed.KIND, "llama", "default") is None
    assert await kube.get("apps/v1", "Deployment", "llama", "default") is None
