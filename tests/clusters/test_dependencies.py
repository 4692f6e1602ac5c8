"""Dependencies in the order AWS needs them, and storage that really mounts.

The sandbox is strict here (docs/sandbox.md, "EKS and add-ons"): Deployment-based add-ons do not
become ACTIVE without Ready nodes, the training operator fails without cert-manager ACTIVE or
its Pod Identity association, and a Mountpoint volume mounts only with credentials the CSI node
pod got at admission. The old create (every add-on before HyperPod, back to back, the CSI
association after the driver's pods) fails each of these.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from podplane.domain.mount_check import KEY
from podplane.services.clusters.identity import role_names
from tests.clusters.helpers import BODY, step, wait_done
from tests.stack import Stack

BEFORE_NODES = {"vpc-cni", "kube-proxy", "eks-pod-identity-agent"}
AFTER_NODES = {"coredns", "cert-manager", "aws-mountpoint-s3-csi-driver",
               "amazon-sagemaker-hyperpod-training-operator"}


def _addon_creates(stack: Stack) -> list[tuple[float, str]]:
    return [(e["time"], e["target"].split("/", 1)[1])
            for e in stack.ledger(service="eks", action="CreateAddon")]


async def test_create_installs_node_addons_after_hyperpod_and_mount_reads_back(
        stack: Stack) -> None:
    async with stack.client("operator") as api:
        op = (await api.post("/api/v1/clusters", json=BODY)).json()
        done = await wait_done(api, op["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    hyperpod_at = stack.ledger(service="sagemaker", action="CreateCluster")[0]["time"]
    creates = _addon_creates(stack)
    assert {n for t, n in creates if t <= hyperpod_at} == BEFORE_NODES
    assert {n for t, n in creates if t > hyperpod_at} == AFTER_NODES
    assert len(creates) == 7  # nothing failed and was recreated
    eks = stack.aws("eks")
    assert {eks.describe_addon(clusterName="alpha", addonName=n)["addon"]["status"]
            for _, n in creates} == {"ACTIVE"}
    owned = {}
    for a in eks.list_pod_identity_associations(clusterName="alpha")["associations"]:
        full = eks.describe_pod_identity_association(
            clusterName="alpha", associationId=a["associationId"])["association"]
        owned[(a["namespace"], a["serviceAccount"])] = full.get("ownerArn", "")
    assert ":addon/alpha/aws-mountpoint-s3-csi-driver/" in owned[("kube-system",
                                                                  "s3-csi-driver-sa")]
    assert ":addon/alpha/amazon-sagemaker-hyperpod-training-operator/" in owned[
        ("aws-hyperpod", "hp-training-operator-controller-manager")]
    iam = stack.aws("iam")
    training = role_names("alpha", "us-west-2")["training"]
    operator_role = next(r for r in iam.list_roles()["Roles"] if r["RoleName"] == training)
    attached = iam.list_attached_role_policies(RoleName=operator_role["RoleName"])
    assert [p["PolicyName"] for p in attached["AttachedPolicies"]] == [
        "AmazonSageMakerHyperPodTrainingOperatorAccess"]
    assert done["result"]["mount"] == "ok", done["result"]
    assert done["result"]["read_back"].endswith(KEY)
    assert stack.kubectl("get", "crd", "hyperpodpytorchjobs.sagemaker.amazonaws.com", "-o",
                         "name").strip()
    operator = json.loads(stack.kubectl("get", "pods", "-n", "aws-hyperpod", "-l",
                                        "app.kubernetes.io/name=hp-training-operator", "-o",
                                        "json"))["items"]
    assert [p["status"]["phase"] for p in operator] == ["Running"]
    env = {e["name"] for e in operator[0]["spec"]["containers"][0].get("env", [])}
    assert "AWS_CONTAINER_CREDENTIALS_FULL_URI" in env  # its association came with CreateAddon


async def _wait_step_running(api: Any, op_id: str, name: str) -> None:
    for _ in range(3000):
        op = (await api.get(f"/api/v1/operations/{op_id}")).json()
        if step(op, name)["status"] in ("running", "succeeded"):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"step {name} never ran")


async def test_mount_test_fails_clearly_when_csi_pods_lack_credentials_then_passes(
        stack: Stack) -> None:
    """An add-on installed outside podplane, before its association: the CSI node pods have no
    credentials, the PVC still binds, and only the mount test notices."""
    async with stack.client("operator") as api:
        op = (await api.post("/api/v1/clusters", json=BODY)).json()
        await _wait_step_running(api, op["id"], "hyperpod")
        stack.aws("eks").create_addon(clusterName="alpha",
                                      addonName="aws-mountpoint-s3-csi-driver")
        failed = await wait_done(api, op["id"])
        assert failed["status"] == "failed", json.dumps(failed["steps"], indent=1)
        error = step(failed, "verify")["error"]
        assert error["code"] == "mount_failed"
        assert "FailedMount" in error["message"] and "no credentials" in error["message"]
        assert "rollout restart daemonset s3-csi-node" in error["hint"]

        stack.kubectl("delete", "pods", "-n", "kube-system", "-l",
                      "app.kubernetes.io/name=s3-csi-node")  # what the hint says
        r = await api.post(f"/api/v1/operations/{op['id']}/steps/verify/retry")
        assert r.status_code in (200, 202), r.text
        done = await wait_done(api, op["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    assert done["result"]["mount"] == "ok"
