"""One create request reaches `succeeded` with every step; the cloud shows what it promised."""

from __future__ import annotations

import json

from podplane.domain.clusters import CREATE_STEPS
from tests.clusters.helpers import BODY, step, wait_done
from tests.stack import Stack


async def test_create_through_rest_then_idempotent_and_unchanged(stack: Stack) -> None:
    async with stack.client("operator") as api:
        r = await api.post("/api/v1/clusters", json=BODY, headers={"Idempotency-Key": "k-1"})
        assert r.status_code == 202, r.text
        op = r.json()
        assert op["kind"] == "cluster.create" and op["target"] == "cluster/alpha"
        assert op["status_tool"] == "operation_wait"
        done = await wait_done(api, op["id"])
        assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
        assert [s["name"] for s in done["steps"]] == list(CREATE_STEPS)
        assert all(s["status"] == "succeeded" for s in done["steps"])

        again = await api.post("/api/v1/clusters", json=BODY, headers={"Idempotency-Key": "k-1"})
        assert again.json()["id"] == op["id"]
        same = await api.post("/api/v1/clusters", json=BODY)
        assert same.status_code == 200 and same.json() == {"changed": False, "plan": []}

        status = (await api.get("/api/v1/clusters/alpha")).json()
    assert status["eks"]["status"] == "ACTIVE"
    assert status["hyperpod"]["status"] == "InService"
    assert status["hyperpod"]["node_recovery"] == "Automatic"
    assert set(status["addons"].values()) == {"ACTIVE"}

    hp = stack.aws("sagemaker").describe_cluster(ClusterName="alpha")
    assert hp["ClusterStatus"] == "InService" and hp["NodeRecovery"] == "Automatic"
    assert hp["NodeProvisioningMode"] == "Continuous"
    group = hp["InstanceGroups"][0]
    assert group["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    assert group["CurrentCount"] == 2
    eks = stack.aws("eks")
    for name in eks.list_addons(clusterName="alpha")["addons"]:
        assert eks.describe_addon(clusterName="alpha", addonName=name)["addon"]["status"] == \
            "ACTIVE"
    assert len(stack.ledger(service="eks", action="CreateCluster")) == 1
    assert len(stack.ledger(service="sagemaker", action="CreateCluster")) == 1

    nodes = json.loads(stack.kubectl("get", "nodes", "-l",
                                     "sagemaker.amazonaws.com/cluster-name=alpha", "-o", "json"))
    assert len(nodes["items"]) == 2
    labels = nodes["items"][0]["metadata"]["labels"]
    assert labels["sagemaker.amazonaws.com/compute-type"] == "hyperpod"
    assert labels["topology.kubernetes.io/zone"] == "us-west-2a"
    agents = json.loads(stack.kubectl("get", "pods", "-n", "aws-hyperpod", "-o", "json"))
    assert len([p for p in agents["items"] if p["status"].get("phase") == "Running"]) == 2
    assert "s3-claim" in stack.kubectl("get", "pvc", "-n", "default")
    assert step(done, "verify")["status"] == "succeeded"
