"""Managed autoscaling (HyperPod-managed Karpenter) end to end in the sandbox: a group with deep
health checks is refused (HyperPod's node class does not support it); enable on a group at zero
nodes; a pending GPU pod brings a node from zero and schedules; once it ends the group drains
back to zero; drift (our NodePool deleted) is put back; disable (a destroy: admin and confirm)
removes only the NodePools and node classes podplane made (a team's NodePool survives)."""

from __future__ import annotations

import json
from typing import Any

from tests.features.conftest import BASE
from tests.features.test_kuberay_keda import _kube, feature, names
from tests.groups.conftest import LIFECYCLE, ROLE, Cluster, finish

GROUP, CHECKED = "gpu-auto", "gpu-dhc"
GPU_POD = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "train-0", "namespace": "default"},
           "spec": {"restartPolicy": "Never",
                    "nodeSelector": {"sagemaker.amazonaws.com/instance-group-name": GROUP},
                    "containers": [{"name": "train", "image": "docker.io/library/busybox:1.36",
                                    "command": ["sleep", "600"],
                                    "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
# a team's node class naming the group with deep health checks (SageMaker docs, "Create a
# NodeClass": such groups are not supported; the class is not Ready)
TEAM_CLASS = {"apiVersion": "karpenter.sagemaker.amazonaws.com/v1", "kind": "HyperpodNodeClass",
              "metadata": {"name": "team-class"}, "spec": {"instanceGroups": [CHECKED]}}
TEAM_POOL = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
             "metadata": {"name": "team-pool"},
             "spec": {"template": {"spec": {"nodeClassRef": {
                 "group": "karpenter.sagemaker.amazonaws.com", "kind": "HyperpodNodeClass",
                 "name": "team-class"}, "requirements": []}}}}


def _add_zero_group(cluster: Cluster) -> None:
    """Continuous provisioning and a group at zero nodes (autoscaling prerequisites), and one
    with on-start deep health checks."""
    sm = cluster.stack.aws("sagemaker")
    first = cluster.describe()["InstanceGroups"][0]
    keep = {"InstanceGroupName": first["InstanceGroupName"], "InstanceType":
            first["InstanceType"], "InstanceCount": first["TargetCount"],
            "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE, "ThreadsPerCore": 1}
    sm.update_cluster(ClusterName="gpu", NodeProvisioningMode="Continuous", InstanceGroups=[
        keep, {**keep, "InstanceGroupName": GROUP, "InstanceCount": 0},
        {**keep, "InstanceGroupName": CHECKED, "InstanceCount": 0,
         "OnStartDeepHealthChecks": ["InstanceStress"]}])
    cluster.stack.advance(10 * 60)
    assert cluster.describe()["ClusterStatus"] == "InService"


def _pod(cluster: Cluster) -> dict[str, Any] | None:
    cluster.stack.sandbox.call(cluster.stack.sandbox.kube.settle())
    out = cluster.stack.kubectl("get", "pods", "-n", "default", "-o", "json")
    pods = {p["metadata"]["name"]: p for p in json.loads(out)["items"]}
    return pods.get("train-0")


def _step_until(cluster: Cluster, done: Any, limit_minutes: int = 60) -> float:
    """Virtual seconds, in 10 s steps, until `done()`."""
    for i in range(limit_minutes * 6):
        cluster.stack.sandbox.call(cluster.stack.sandbox.kube.settle())
        if done():
            return i * 10.0
        cluster.stack.advance(10)
    raise AssertionError("did not happen in virtual time")


def _ready(cluster: Cluster, node_class: str) -> dict[str, Any] | None:
    """The HyperpodNodeClass's Ready condition (read from the sandbox's store: no process)."""
    cluster.stack.sandbox.call(cluster.stack.sandbox.kube.settle())
    store = cluster.stack.sandbox.kube.get(cluster.name).store
    found = store.find("karpenter.sagemaker.amazonaws.com/hyperpodnodeclasses", "", node_class)
    conds = ((found or {}).get("status") or {}).get("conditions") or []
    return next((c for c in conds if c["type"] == "Ready"), None)


async def _deep_health_checks_refused(client: Any, stack: Any) -> None:
    """A group with deep health checks: 409 naming the reason, in the plan, a dry run and the
    change alike, and nothing done."""
    count, body = len(stack.ledger()), {"enabled": True, "settings": {"groups": [CHECKED]}}
    for answer in (await client.post(f"{BASE}/managed-autoscaling/plan", json=body),
                   await client.patch(f"{BASE}/managed-autoscaling", json=body,
                                      params={"dry_run": "true"}),
                   await client.patch(f"{BASE}/managed-autoscaling", json=body)):
        assert answer.status_code == 409, answer.text
        assert "deep health checks" in answer.json()["detail"], answer.text
    assert len(stack.ledger()) == count


async def test_scale_from_zero_and_back(cluster: Cluster) -> None:
    stack = cluster.stack
    _add_zero_group(cluster)
    start = len(stack.ledger())
    async with stack.client("operator") as client:
        refused = await client.patch(f"{BASE}/managed-autoscaling",
                                     json={"enabled": True, "settings": {"groups": ["nope"]}})
        assert refused.status_code == 422, refused.text
        await _deep_health_checks_refused(client, stack)
        r = await client.patch(f"{BASE}/managed-autoscaling",
                               json={"enabled": True, "settings": {"groups": [GROUP]}})
        assert r.status_code == 202, r.text
        done = await finish(client, r.json())
        assert done["status"] == "succeeded", done
        described = cluster.describe()
        assert described["AutoScaling"]["Mode"] == "Enable"
        role = described["ClusterRole"].split("/")[-1]
        assert role.startswith("podplane-gpu-karpenter")
        # the principal AWS documents (sagemaker-hyperpod-eks-autoscaling-iam)
        trust = stack.aws("iam").get_role(RoleName=role)["Role"]["AssumeRolePolicyDocument"]
        assert trust["Statement"][0]["Principal"] == {
            "Service": "hyperpod.sagemaker.amazonaws.com"}
        kube = await _kube(cluster)
        await kube.apply(TEAM_POOL, force=True)
        await kube.apply(TEAM_CLASS, force=True)
        assert names(cluster, "nodepools") == {"podplane-gpu-auto", "team-pool"}
        _step_until(cluster, lambda: _ready(cluster, "team-class") is not None)
        ready = _ready(cluster, "team-class")
        assert ready is not None and ready["status"] == "False", ready
        assert CHECKED in ready["message"] and "deep health checks" in ready["message"]
        assert _ready(cluster, "podplane-gpu-auto")["status"] == "True"  # type: ignore[index]

        count = len(stack.ledger())
        same = await client.patch(f"{BASE}/managed-autoscaling", json={"enabled": True})
        assert same.status_code == 200 and same.json()["changed"] is False
        assert len(stack.ledger()) == count

        # a pending GPU pod brings a node from zero
        await kube.apply(GPU_POD, force=True)
        up = _step_until(cluster, lambda: ((_pod(cluster) or {}).get("status") or {}).get(
            "phase") == "Running")
        adds = stack.ledger(action="BatchAddClusterNodes")
        assert [a["params"]["group"] for a in adds] == [GROUP]
        assert len(cluster.nodes_of(GROUP)) == 1
        # it ends; the empty node goes after consolidateAfter and the group is back at zero
        await kube.delete("v1", "Pod", "train-0", namespace="default")
        down = _step_until(cluster, lambda: not cluster.nodes_of(GROUP))
        (group,) = [g for g in cluster.describe()["InstanceGroups"]
                    if g["InstanceGroupName"] == GROUP]
        assert group["TargetCount"] == 0
        assert len(stack.ledger(action="BatchDeleteClusterNodes")) == 1
        print(f"scale from zero: pod Running after {up / 60:.1f} virtual minutes; "
              f"back to zero {down / 60:.1f} virtual minutes after it ended")
        assert 0 < up <= 20 * 60 and 0 < down <= 10 * 60

        # drift: our NodePool deleted out of band
        stack.kubectl("delete", "nodepool", "podplane-gpu-auto")
        drifted = await feature(client, "managed-autoscaling")
        assert drifted["drifted"] is True
        assert any("NodePool podplane-gpu-auto is missing" in d for d in drifted["drift"])
        fix = await client.patch(f"{BASE}/managed-autoscaling", json={"enabled": True})
        assert [a["verb"] for a in fix.json()["plan"]["actions"]] == ["create"]
        assert (await finish(client, fix.json()))["status"] == "succeeded"

        # off drains and terminates what Karpenter provisioned: a destroy (admin + confirm)
        before_off = len(stack.ledger())
        refused = await client.patch(f"{BASE}/managed-autoscaling", json={"enabled": False})
        assert refused.status_code == 403 and refused.json()["needed_role"] == "admin"
    async with stack.client("admin") as client:
        unconfirmed = await client.patch(f"{BASE}/managed-autoscaling",
                                         json={"enabled": False})
        assert unconfirmed.status_code == 428, unconfirmed.text
        assert "hyperpod AutoScaling" in unconfirmed.json()["detail"]
        assert "NodePool podplane-gpu-auto" in unconfirmed.json()["detail"]
        assert len(stack.ledger()) == before_off  # refused: untouched
        assert (await feature(client, "managed-autoscaling"))["desired_enabled"] is True
        off = await client.patch(f"{BASE}/managed-autoscaling", json={"enabled": False},
                                 params={"confirm": "true"})
        assert off.status_code == 202, off.text
        assert (await finish(client, off.json()))["status"] == "succeeded"
        assert names(cluster, "nodepools") == {"team-pool"}
        assert names(cluster, "hyperpodnodeclasses") == {"team-class"}
        assert cluster.describe()["AutoScaling"]["Mode"] == "Disable"
    made = [f"{e['service']}:{e['action']}" for e in stack.ledger()[start:]]
    print("managed-autoscaling ledger:", made)
    assert made == [
        "iam:CreateRole", "iam:PutRolePolicy", "sagemaker:UpdateCluster",   # enable
        "sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes",  # Karpenter
        # drift repair: Kubernetes only; disable: AutoScaling off while its role still exists
        "sagemaker:UpdateCluster", "iam:DeleteRolePolicy", "iam:DeleteRole"]
