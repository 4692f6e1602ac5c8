"""Tiered checkpointing on a sandbox cluster: TieredStorageConfig on the HyperPod cluster plus
the identity chain (IAM role limited to the checkpoint prefix, Pod Identity association,
ServiceAccount), read back with boto3 and kubectl; drift on the role's policy is found and
put back; disable removes exactly that chain."""

from __future__ import annotations

import json
from typing import Any

from tests.features.conftest import BASE, BUCKET
from tests.features.test_kuberay_keda import feature
from tests.groups.conftest import Cluster, finish

OTHER_ROLE_TRUST = {"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
    "Action": ["sts:AssumeRole", "sts:TagSession"]}]}


def ckpt_roles(cluster: Cluster) -> list[dict[str, Any]]:
    roles = cluster.stack.aws("iam").list_roles()["Roles"]
    return [r for r in roles if r["RoleName"].startswith("podplane-gpu-ckpt")]


def associations(cluster: Cluster) -> list[tuple[str, str]]:
    found = cluster.stack.aws("eks").list_pod_identity_associations(clusterName="gpu")
    return sorted((a["namespace"], a["serviceAccount"]) for a in found["associations"])


def statements_allow_no_star(policy: dict[str, Any]) -> None:
    for st in policy["Statement"]:
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
        assert all("*" not in a for a in actions), actions
        assert all(r != "*" and not r.endswith(":::*") for r in resources), resources
        assert all(r.startswith(f"arn:aws:s3:::{BUCKET}") for r in resources), resources


async def test_tiered_checkpointing_chain(cluster: Cluster) -> None:
    stack = cluster.stack
    iam = stack.aws("iam")
    # someone else's role and association in the same account and cluster: must survive
    iam.create_role(RoleName="team-reader", AssumeRolePolicyDocument=json.dumps(
        OTHER_ROLE_TRUST))
    stack.advance(20)
    stack.aws("eks").create_pod_identity_association(
        clusterName="gpu", namespace="default", serviceAccount="team-reader",
        roleArn="arn:aws:iam::123456789012:role/team-reader")
    async with stack.client("operator") as client:
        refused = await client.patch(f"{BASE}/tiered-checkpointing",
                                     json={"enabled": True, "settings": {"memory_percent": 0}})
        assert refused.status_code == 422, refused.text
        ledger_before = stack.ledger()

        r = await client.patch(f"{BASE}/tiered-checkpointing",
                               json={"enabled": True, "settings": {"memory_percent": 30}})
        assert r.status_code == 202, r.text
        assert [a["kind"] for a in r.json()["plan"]["actions"]] == [
            "iam-role", "pod-identity", "kube", "hyperpod-setting"]
        done = await finish(client, r.json())
        assert done["status"] == "succeeded", done

        described = cluster.describe()
        assert described["TieredStorageConfig"] == {
            "Mode": "Enable", "InstanceMemoryAllocationPercentage": 30}
        (role,) = ckpt_roles(cluster)
        name = role["RoleName"]
        assert iam.list_role_policies(RoleName=name)["PolicyNames"] == ["podplane-checkpoints"]
        assert iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"] == []
        policy = iam.get_role_policy(RoleName=name,
                                     PolicyName="podplane-checkpoints")["PolicyDocument"]
        statements_allow_no_star(policy)
        assert policy["Statement"][0]["Resource"] == \
            f"arn:aws:s3:::{BUCKET}/checkpoints/gpu/*"
        assert ("default", "tiered-checkpointing") in associations(cluster)
        sa = json.loads(stack.kubectl("get", "sa", "tiered-checkpointing", "-n", "default",
                                      "-o", "json"))
        assert sa["metadata"]["annotations"]["podplane.io/iam-role"] == role["Arn"]
        view = await feature(client, "tiered-checkpointing")
        assert (view["observed_enabled"], view["drifted"]) == (True, False)

        count = len(stack.ledger())
        same = await client.patch(f"{BASE}/tiered-checkpointing", json={"enabled": True})
        assert same.status_code == 200 and same.json()["changed"] is False
        assert len(stack.ledger()) == count

        # drift: the role's policy widened out of band
        iam.put_role_policy(RoleName=name, PolicyName="podplane-checkpoints",
                            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
                                {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        drifted = await feature(client, "tiered-checkpointing")
        assert drifted["drifted"] is True
        assert any("policy.Statement.0.Action" in d for d in drifted["drift"]), drifted
        fix = await client.patch(f"{BASE}/tiered-checkpointing", json={"enabled": True})
        assert fix.status_code == 202
        assert [a["verb"] for a in fix.json()["plan"]["actions"]] == ["update"]
        assert (await finish(client, fix.json()))["status"] == "succeeded"
        statements_allow_no_star(iam.get_role_policy(
            RoleName=name, PolicyName="podplane-checkpoints")["PolicyDocument"])

        off = await client.patch(f"{BASE}/tiered-checkpointing", json={"enabled": False})
        assert off.status_code == 202, off.text
        assert (await finish(client, off.json()))["status"] == "succeeded"
        assert cluster.describe()["TieredStorageConfig"] == {"Mode": "Disable"}
        assert ckpt_roles(cluster) == []
        assert associations(cluster) == [("default", "team-reader")]
        assert iam.get_role(RoleName="team-reader")["Role"]["RoleName"] == "team-reader"
        sas = json.loads(stack.kubectl("get", "sa", "-n", "default", "-o", "json"))["items"]
        assert "tiered-checkpointing" not in {s["metadata"]["name"] for s in sas}

    made = [f"{e['service']}:{e['action']}" for e in stack.ledger()[len(ledger_before):]]
    print("tiered-checkpointing ledger (enable, no-op, policy repair, disable):", made)
    assert made == [
        "iam:CreateRole", "iam:PutRolePolicy", "eks:CreatePodIdentityAssociation",
        "sagemaker:UpdateCluster",                         # enable: 4 AWS mutations
        "iam:PutRolePolicy",                               # drift made out of band
        "iam:PutRolePolicy",                               # the repair: 1 mutation
        # disable: 4, exactly the chain; the role goes last
        "eks:DeletePodIdentityAssociation", "sagemaker:UpdateCluster",
        "iam:DeleteRolePolicy", "iam:DeleteRole"]
