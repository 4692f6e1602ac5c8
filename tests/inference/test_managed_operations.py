"""A managed endpoint after its create, read back with the Kubernetes API: listed and viewed
with its kind, the operator's state and the pods of the operator's Deployment; scaled through
the config's `spec.replicas` (the operation ends when that many pods are Ready); updated
through the config (the operator rolls its Deployment, a smoke request ends it); an image
that cannot pull rolls the config back and the operation says why."""

from __future__ import annotations

from typing import Any

import httpx

from podplane.domain.inference import managed
from podplane.services.cloud_access import cloud_of
from tests.features.test_inference_operator import _enable, _prerequisites
from tests.groups.conftest import (
    CLUSTER,
    FIRST_GROUP,
    FIRST_TYPE,
    LIFECYCLE,
    ROLE,
    Cluster,
    finish,
)
from tests.groups.conftest import cluster as group_cluster  # noqa: F401 - fixture reuse
from tests.inference.conftest import settle
from tests.inference.test_managed_endpoints import (
    BODY,
    URL,
    feature_cluster,  # noqa: F401
)

NEW = "docker.io/vllm/vllm-openai:latest"
MISSING = "docker.io/vllm/vllm-openai:v0.0.404"


def grow(cluster: Cluster, count: int) -> None:
    """The group at `count` nodes, each advertising its GPU (the device plugin runs there)."""
    cluster.stack.aws("sagemaker").update_cluster(ClusterName=cluster.name, InstanceGroups=[{
        "InstanceGroupName": FIRST_GROUP, "InstanceType": FIRST_TYPE, "InstanceCount": count,
        "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE, "ThreadsPerCore": 1,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]}])
    cluster.stack.advance(20 * 60)
    for _ in range(40):
        settle(cluster.stack, 15)
        nodes = cluster.stack.sandbox.kube.get(CLUSTER).store.items("nodes")
        if len(nodes) == count and all(
                n["status"].get("allocatable", {}).get("nvidia.com/gpu") for n in nodes):
            return
    raise AssertionError(f"{count} nodes with GPUs never showed up")


async def deployed(cluster: Cluster, body: dict[str, Any] | None = None,
                   succeeds: bool = True) -> None:
    _prerequisites(cluster, "cert-manager", "aws-mountpoint-s3-csi-driver",
                   "aws-fsx-csi-driver")
    await _enable(cluster)
    async with cluster.stack.client("operator") as client:
        made = await client.post(URL, json=body or BODY)
        assert made.status_code == 202, made.text
        done = await finish(client, made.json())
        assert (done["status"] == "succeeded") is succeeds, done
        if not succeeds:
            assert "acceptEula" in done["error"]["message"], done
            assert "accept_eula=true" in done["error"]["hint"], done


async def pods(cluster: Cluster) -> list[dict[str, Any]]:
    """The pods of the operator's Deployment, by that Deployment's selector."""
    kube = await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)
    dep = await kube.get("apps/v1", "Deployment", "llama", "default")
    assert dep is not None
    found = await kube.list("v1", "Pod", namespace="default",
                            labels=dep["spec"]["selector"]["matchLabels"])
    return [p for p in found if not p["metadata"].get("deletionTimestamp")]


async def config(cluster: Cluster) -> dict[str, Any]:
    kube = await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)
    found = await kube.get(managed.API_VERSION, managed.KIND, "llama", "default")
    assert found is not None
    return found


async def _update(client: httpx.AsyncClient, image: str) -> dict[str, Any]:
    r = await client.patch(f"{URL}/llama", json={"image": image})
    assert r.status_code == 202, r.text
    assert r.json()["plan"]["manifest"]["kind"] == managed.KIND
    return await finish(client, r.json())


async def test_list_get_scale_and_update_a_managed_endpoint(
        feature_cluster: Cluster) -> None:  # noqa: F811
    cluster = feature_cluster
    await deployed(cluster)
    async with cluster.stack.client("operator") as client:
        listed = (await client.get(URL)).json()
        assert [(e["name"], e["kind"], e["state"]) for e in listed] == [
            ("llama", "managed", "DeploymentComplete")], listed
        view = (await client.get(f"{URL}/llama")).json()
        assert (view["status"], view["ready_replicas"], len(view["pods"])) == ("Ready", 1, 1)
        assert view["model"] == BODY["model"].rstrip("/") and view["load_balancer"]

        grow(cluster, 3)   # the rollout of 2 replicas starts a third pod before one stops
        scaled = await client.patch(f"{URL}/llama", json={"replicas": 2})
        assert scaled.status_code == 202, scaled.text
        assert (await finish(client, scaled.json()))["status"] == "succeeded"
        assert (await config(cluster))["spec"]["replicas"] == 2
        assert [p["status"]["phase"] for p in await pods(cluster)] == ["Running"] * 2

        refused = await client.patch(f"{URL}/llama", json={"dtype": "float16"})
        assert refused.status_code == 422 and refused.json()["field"] == "dtype", refused.text

        done = await _update(client, NEW)
        assert done["status"] == "succeeded", done
        assert (await config(cluster))["spec"]["worker"]["image"] == NEW
        assert {p["spec"]["containers"][0]["image"] for p in await pods(cluster)} == {NEW}

        failed = await _update(client, MISSING)
        assert failed["status"] == "failed", failed
        error = failed["error"]
        assert error["code"] == "endpoint_update_failed", error
        assert "ImagePullBackOff" in error["message"] and "serves again" in error["message"]
        assert (await config(cluster))["spec"]["worker"]["image"] == NEW
        running = await pods(cluster)
        assert {p["spec"]["containers"][0]["image"] for p in running} == {NEW}
        assert len(running) == 2
        answer = await client.post(f"{URL}/llama/invoke", json={"prompt": "still there?"})
        assert answer.status_code == 200, answer.text


async def test_jumpstart_and_fsx_sources(feature_cluster: Cluster) -> None:  # noqa: F811
    cluster = feature_cluster
    js = {**BODY, "name": "ds", "model": "jumpstart:deepseek-llm-r1-distill-qwen-1-5b@2.0.4"}
    gated = {**BODY, "name": "llama8",
             "model": "jumpstart:meta-textgeneration-llama-3-1-8b-instruct"}
    await deployed(cluster, gated, succeeds=False)   # the licence was not accepted
    async with cluster.stack.client("operator") as client:
        s3 = await client.post(URL, json={**BODY, "name": "eula", "accept_eula": True})
        assert s3.status_code == 422 and s3.json()["field"] == "accept_eula", s3.text
    kube = await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)
    async with cluster.stack.client("operator") as client:
        bad = await client.post(URL, json={**BODY, "name": "kv", "kv_cache": "redis"})
        assert bad.status_code == 422 and bad.json()["field"] == "kv_cache_url", bad.text
        plan = await client.post(URL, json={**BODY, "name": "kv", "kv_cache": "tieredstorage",
                                            "routing": "kvaware", "dry_run": True})
        assert plan.status_code == 200, plan.text
        spec = plan.json()["plan"]["manifests"][0]["spec"]
        assert spec["intelligentRoutingSpec"] == {"enabled": True, "routingStrategy": "kvaware"}
        assert spec["kvCacheSpec"]["l2CacheSpec"] == {"l2CacheBackend": "tieredstorage"}
        # The operator autoscales a managed endpoint from its config, on the observability
        # feature's Prometheus workspace: refused (409, nothing made) while that is off.
        scaled = await client.post(URL, json={**BODY, "name": "auto", "autoscaling": {
            "min_replicas": 1, "max_replicas": 2, "metric": "running", "target": 4}})
        assert scaled.status_code == 409 and "observability" in scaled.text, scaled.text
        made = await client.post(URL, json=js)
        assert made.status_code == 202, made.text
        assert (await finish(client, made.json()))["status"] == "succeeded"
    model = await kube.get(managed.API_VERSION, "JumpStartModel", "ds", "default")
    assert model is not None and model["status"]["state"] == "DeploymentComplete"
    dep = await kube.get("apps/v1", "Deployment", "ds", "default")
    assert dep is not None and dep["metadata"]["ownerReferences"][0]["kind"] == "JumpStartModel"
    async with cluster.stack.client("operator") as client:
        view = (await client.get(f"{URL}/ds")).json()
        assert (view["engine"], view["model"], view["status"]) == (
            "jumpstart", js["model"], "Ready"), view
        refused = await client.patch(f"{URL}/ds", json={"image": NEW})
        assert refused.status_code == 422, refused.text

        count = len(cluster.stack.ledger())
        on_fsx = await client.post(URL, json={**BODY, "name": "fx", "model": "fsx:models/x"})
        assert on_fsx.status_code == 409 and "fsx-lustre" in on_fsx.json()["hint"], on_fsx.text
        assert len(cluster.stack.ledger()) == count
        self_managed = await client.post(URL, json={**BODY, "kind": "self_managed",
                                                    "model": "fsx:models/x"})
        assert self_managed.status_code == 422 and self_managed.json()["field"] == "model"
