"""The identity a create sets up, as AWS shows it: an execution role HyperPod can use on EKS
nodes (AWS's reference role stack) that reads the packaged lifecycle script, roles used only
after IAM propagated (the sandbox's lag mode is on), and no OIDC provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from podplane.services.cloud_access import cloud_of
from podplane.services.clusters.identity import (
    delete_identity,
    ensure_lifecycle_script,
    ensure_role,
    role_names,
)
from podplane.services.clusters.network import CLUSTER_TAG, MANAGED_TAG
from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.clusters.helpers import BODY, wait_done
from tests.sandbox_aws.iam_setup import read_scripts, trust
from tests.stack import Stack

PACKAGED = (Path(__file__).resolve().parents[2]
            / "src/podplane/services/clusters/lifecycle/on_create.sh")


async def create(stack: Stack) -> dict[str, Any]:
    async with stack.client("operator") as api:
        r = await api.post("/api/v1/clusters", json=BODY)
        assert r.status_code == 202, r.text
        return await wait_done(api, r.json()["id"])


def inline_policy(stack: Stack, role: str) -> dict[str, Any]:
    got = stack.aws("iam").get_role_policy(RoleName=role, PolicyName="podplane")
    doc = got["PolicyDocument"]
    return dict(json.loads(doc) if isinstance(doc, str) else doc)


async def test_create_gives_hyperpod_a_role_that_reads_the_packaged_script(stack: Stack) -> None:
    done = await create(stack)
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    iam = stack.aws("iam")
    hp = stack.aws("sagemaker").describe_cluster(ClusterName="alpha")
    group = hp["InstanceGroups"][0]
    role = group["ExecutionRole"].rsplit("/", 1)[-1]
    assert role == role_names("alpha", "us-west-2")["hyperpod"]
    attached = iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    assert [p["PolicyArn"] for p in attached] == [
        "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy"]
    statements = inline_policy(stack, role)["Statement"]
    actions = {a for s in statements for a in s["Action"]}
    assert {"ec2:AssignPrivateIpAddresses", "ecr:BatchGetImage",
            "eks-auth:AssumeRoleForPodIdentity", "logs:PutLogEvents"} <= actions
    for s in statements:  # least privilege: only node actions go on "*"
        if s["Resource"] == "*":
            assert all(a.startswith(("ec2:", "ecr:", "eks-auth:", "cloudwatch:Describe"))
                       and a != "ec2:CreateTags" for a in s["Action"])

    uri = group["LifeCycleConfig"]["SourceS3Uri"]
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    body = stack.aws("s3").get_object(Bucket=bucket, Key=prefix + "on_create.sh")["Body"].read()
    assert body == PACKAGED.read_bytes()
    assert iam.list_open_id_connect_providers()["OpenIDConnectProviderList"] == []


async def test_services_get_each_role_only_after_iam_propagated(stack: Stack) -> None:
    """With lag on, EKS refuses the just-created cluster role: the create retries on its own
    clock, so the accepted CreateCluster comes at least one lag after CreateRole."""
    done = await create(stack)
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    names = role_names("alpha", "us-west-2")
    created = {e["target"].rsplit("/", 1)[-1]: e["time"]
               for e in stack.ledger(service="iam", action="CreateRole")}
    eks_create = stack.ledger(service="eks", action="CreateCluster")[0]["time"]
    assert eks_create >= created[names["eks"]] + LAG_SECONDS
    association = stack.ledger(service="eks", action="CreatePodIdentityAssociation")[0]["time"]
    assert association >= created[names["s3csi"]] + LAG_SECONDS


async def test_delete_removes_only_the_oidc_providers_podplane_tagged(stack: Stack) -> None:
    iam = stack.aws("iam")
    ours = iam.create_open_id_connect_provider(
        Url="https://oidc.eks.us-west-2.amazonaws.com/id/AAAA", ClientIDList=["sts.amazonaws.com"],
        ThumbprintList=["9" * 40], Tags=[{"Key": CLUSTER_TAG, "Value": "alpha"},
                                         {"Key": MANAGED_TAG, "Value": "true"}])
    theirs = iam.create_open_id_connect_provider(
        Url="https://oidc.eks.us-west-2.amazonaws.com/id/BBBB", ClientIDList=["sts.amazonaws.com"],
        ThumbprintList=["9" * 40], Tags=[{"Key": CLUSTER_TAG, "Value": "alpha"}])
    gone = await delete_identity(cloud_of(stack.app.state.podplane).aws.iam, "alpha",
                                 "us-west-2")
    assert gone == [ours["OpenIDConnectProviderArn"]]
    left = [p["Arn"] for p in iam.list_open_id_connect_providers()["OpenIDConnectProviderList"]]
    assert left == [theirs["OpenIDConnectProviderArn"]]


async def test_delete_removes_the_cluster_roles_under_new_and_old_names(stack: Stack) -> None:
    iam = cloud_of(stack.app.state.podplane).aws.iam
    new = role_names("alpha", "us-west-2")["eks"]
    await ensure_role(iam, "alpha", new, "eks.amazonaws.com",
                      ("arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",),
                      inline=read_scripts("podplane-scripts"))
    await ensure_role(iam, "alpha", "podplane-alpha-s3csi", "pods.eks.amazonaws.com")
    stack.aws("iam").create_role(RoleName="podplane-alpha-hyperpod",  # not tagged: not ours
                                 AssumeRolePolicyDocument=trust("sagemaker.amazonaws.com"))
    gone = await delete_identity(iam, "alpha", "us-west-2")
    assert sorted(gone) == sorted([new, "podplane-alpha-s3csi"])
    left = [r["RoleName"] for r in stack.aws("iam").list_roles()["Roles"]]
    assert "podplane-alpha-hyperpod" in left and new not in left


async def test_a_stale_lifecycle_script_is_replaced_by_the_packaged_one(stack: Stack) -> None:
    s3 = stack.aws("s3")
    s3.create_bucket(Bucket="podplane-scripts", CreateBucketConfiguration={
        "LocationConstraint": "us-west-2"})
    s3.put_object(Bucket="podplane-scripts", Key="podplane/lifecycle/on_create.sh",
                  Body=b"#!/bin/bash\necho old\n")
    port = cloud_of(stack.app.state.podplane).aws.s3
    uri = await ensure_lifecycle_script(port, "podplane-scripts")
    assert uri == "s3://podplane-scripts/podplane/lifecycle/"
    got = s3.get_object(Bucket="podplane-scripts", Key="podplane/lifecycle/on_create.sh")
    assert got["Body"].read() == PACKAGED.read_bytes()
    puts = len(stack.ledger(service="s3", action="PutObject"))
    await ensure_lifecycle_script(port, "podplane-scripts")  # same bytes: no upload
    assert len(stack.ledger(service="s3", action="PutObject")) == puts
