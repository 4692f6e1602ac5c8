"""Nodes: health joined from HyperPod and Kubernetes, replace, reboot, delete, confirmation."""

from __future__ import annotations

from podplane.services.cloud_access import cloud_of
from tests.groups.conftest import FIRST_GROUP, Cluster, finish, ready

BASE = "/api/v1/clusters/gpu/nodes"
TRAINER = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "trainer", "namespace": "default"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "trainer"}},
             "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": {"containers": [{
                 "name": "train", "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}},
}


async def test_replace_gives_a_new_instance_and_node_while_the_old_one_drains(
    cluster: Cluster,
) -> None:
    stack = cluster.stack
    (old,) = cluster.nodes_of(FIRST_GROUP)
    old_id = old["InstanceId"]
    kube = await cloud_of(stack.app.state.podplane).kube_for(cluster.name)
    await kube.apply(TRAINER)
    await cluster.kube_nodes()  # let the scheduler and kubelet run
    (pod,) = await kube.list("v1", "Pod", namespace="default", labels={"app": "trainer"})
    assert pod["spec"]["nodeName"] == f"hyperpod-{old_id}"
    async with stack.client("admin") as admin, stack.client("operator") as operator:
        listed = (await operator.get(BASE)).json()
        assert [n["id"] for n in listed] == [old_id]
        assert listed[0]["kubernetes_node"] == f"hyperpod-{old_id}"
        assert listed[0]["health"]["state"] == "healthy"
        assert listed[0]["gpus"] == {"capacity": 1, "allocatable": 1, "allocated": 1}  # trainer

        assert (await operator.post(f"{BASE}/{old_id}/replace",
                                    params={"confirm": "true"})).status_code == 403
        unconfirmed = await admin.post(f"{BASE}/{old_id}/replace")
        assert unconfirmed.status_code == 428
        assert "instance storage" in unconfirmed.json()["detail"]
        plan = await admin.post(f"{BASE}/{old_id}/replace", params={"dry_run": "true"})
        assert plan.status_code == 200 and "lost" in plan.json()["plan"]["warning"]

        r = await admin.post(f"{BASE}/{old_id}/replace", json={"confirm": True},
                             headers={"Idempotency-Key": "replace-1"})
        assert r.status_code == 202, r.text
        again = await admin.post(f"{BASE}/{old_id}/replace", json={"confirm": True},
                                 headers={"Idempotency-Key": "replace-1"})
        assert again.json()["id"] == r.json()["id"]
        done = await finish(admin, r.json())
        assert done["status"] == "succeeded", done
        new_id = done["result"]["new_instance_id"]
        assert new_id != old_id and new_id.startswith("i-")
        assert [s["name"] for s in done["steps"]] == ["drain", "replace", "kubernetes"]
        assert done["result"]["cordoned"] == f"hyperpod-{old_id}"
        assert done["result"]["evicted"] == [f"default/{pod['metadata']['name']}"]

    assert [n["InstanceId"] for n in cluster.nodes_of(FIRST_GROUP)] == [new_id]
    stack.advance(5)  # the kubelet starts the rescheduled pod's container
    stack.sandbox.call(stack.sandbox.kube.settle())  # let the controllers act on that step
    names = {n["metadata"]["name"]: n for n in await cluster.kube_nodes()}
    assert set(names) == {f"hyperpod-{new_id}"} and ready(names[f"hyperpod-{new_id}"])
    assert len(stack.ledger(service="sagemaker", action="BatchReplaceClusterNodes")) == 1
    (moved,) = await kube.list("v1", "Pod", namespace="default", labels={"app": "trainer"})
    assert moved["spec"]["nodeName"] == f"hyperpod-{new_id}"
    for _ in range(6):  # a loaded machine may need a few more virtual-time steps of the kubelet
        if moved["status"].get("phase") == "Running":
            break
        stack.advance(5)
        stack.sandbox.call(stack.sandbox.kube.settle())
        (moved,) = await kube.list("v1", "Pod", namespace="default", labels={"app": "trainer"})
    assert moved["status"]["phase"] == "Running"


async def test_unhealthy_node_shows_its_fault_and_the_next_step_then_reboots(
    cluster: Cluster,
) -> None:
    stack = cluster.stack
    (node,) = cluster.nodes_of(FIRST_GROUP)
    iid = node["InstanceId"]
    stack.fault(kind="node_unhealthy", cluster=cluster.name, instance_id=iid, action="reboot",
                reason="NvidiaErrorReboot:XidHardwareFailure")
    stack.advance(10)  # the node controller copies the health labels
    await cluster.kube_nodes()
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        seen = (await viewer.get(f"{BASE}/hyperpod-{iid}")).json()
        health = seen["health"]
        assert health["state"] == "unhealthy"
        assert health["node_health_status"] == "UnschedulablePendingReboot"
        assert health["fault_type"] == "NvidiaErrorReboot"
        assert health["fault_reason"] == "NvidiaErrorReboot-XidHardwareFailure"
        assert health["suggested_action"] == "reboot"
        assert [s["action"] for s in health["escalation"]] == ["investigate", "reboot",
                                                               "replace"]
        assert [s["suggested"] for s in health["escalation"]] == [False, True, False]
        assert "automatically" in health["note"]
        assert seen["availability_zone"] == "us-west-2a"

        assert (await viewer.post(f"{BASE}/{iid}/reboot")).status_code == 403
        r = await operator.post(f"{BASE}/{iid}/reboot")
        assert r.status_code == 202, r.text
        done = await finish(operator, r.json())
        assert done["status"] == "succeeded", done
        after = (await viewer.get(f"{BASE}/{iid}")).json()["health"]
        assert after["state"] == "healthy" and after["fault_type"] is None
    assert len(stack.ledger(service="sagemaker", action="BatchRebootClusterNodes")) == 1


async def test_deleting_a_node_lowers_the_group_count(cluster: Cluster) -> None:
    stack = cluster.stack
    async with stack.client("admin") as admin:
        r = await admin.patch("/api/v1/clusters/gpu/instance-groups/workers", json={"count": 2})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
        victim = cluster.nodes_of(FIRST_GROUP)[0]["InstanceId"]
        assert (await admin.delete(f"{BASE}/{victim}")).status_code == 428
        r = await admin.delete(f"{BASE}/{victim}", params={"confirm": "true"})
        assert r.status_code == 202, r.text
        assert (await finish(admin, r.json()))["status"] == "succeeded"
        group = (await admin.get("/api/v1/clusters/gpu/instance-groups/workers")).json()
        missing = await admin.get(f"{BASE}/{victim}")
    assert group["target_count"] == 1
    assert victim not in [n["InstanceId"] for n in cluster.nodes_of(FIRST_GROUP)]
    assert missing.status_code == 404
    assert f"hyperpod-{victim}" not in {n["metadata"]["name"] for n in await cluster.kube_nodes()}
