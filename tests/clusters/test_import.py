"""Import a cluster made outside podplane (straight through the sandbox's AWS API): connection
test, state detection, then it is managed like ours; deleting it only detaches it."""

from __future__ import annotations

import base64
import ssl
from pathlib import Path
from typing import Any

import boto3
import httpx

from podplane.cloud.kube.eks_token import eks_token, static_session
from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.clusters.helpers import step, wait_done
from tests.net_helpers import add_way_out
from tests.sandbox_aws.iam_setup import make_role, put_scripts, read_scripts
from tests.stack import Stack

CRDS = Path(__file__).parents[2] / ".." / "shared" / "crds"
RAYJOB_CRD = CRDS / "kuberay" / "ray.io_rayjobs.yaml"


def make_outside_cluster(stack: Stack) -> None:
    ec2 = stack.aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.9.{i}.0/24",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"]
               for i, az in enumerate(["us-west-2a", "us-west-2b"])]
    add_way_out(ec2, stack.advance, vpc, "10.9.9.0/24", subnets[:1])
    sg = ec2.create_security_group(GroupName="legacy", Description="nodes",
                                   VpcId=vpc)["GroupId"]
    eks_role = make_role(stack.aws, "legacy-eks", ("eks.amazonaws.com",))
    hp_role = make_role(stack.aws, "legacy-hp", ("sagemaker.amazonaws.com",),
                        read_scripts("legacy-lc"))
    put_scripts(stack.aws, "legacy-lc", "lc/on_create.sh")
    stack.advance(LAG_SECONDS)
    eks = stack.aws("eks")
    eks.create_cluster(name="legacy", roleArn=eks_role,
                       resourcesVpcConfig={"subnetIds": subnets},
                       accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    stack.advance(15 * 60)
    eks.create_addon(clusterName="legacy", addonName="vpc-cni")
    eks.create_addon(clusterName="legacy", addonName="coredns")
    arn = eks.describe_cluster(name="legacy")["cluster"]["arn"]
    stack.aws("sagemaker").create_cluster(
        ClusterName="legacy-hp", Orchestrator={"Eks": {"ClusterArn": arn}},
        VpcConfig={"SecurityGroupIds": [sg], "Subnets": subnets[:1]},
        InstanceGroups=[{"InstanceGroupName": "workers", "InstanceType": "ml.g5.xlarge",
                         "InstanceCount": 1, "ExecutionRole": hp_role,
                         "LifeCycleConfig": {"SourceS3Uri": "s3://legacy-lc/lc/",
                                             "OnCreate": "on_create.sh"}}])
    stack.advance(20 * 60)
    stack.kubectl("apply", "-f", str(RAYJOB_CRD.resolve()))


async def test_import_detects_state_and_delete_detaches(stack: Stack) -> None:
    make_outside_cluster(stack)
    async with stack.client("admin") as api:
        listed = (await api.get("/api/v1/clusters")).json()
        assert listed["unmanaged_eks"] == ["legacy"]
        r = await api.post("/api/v1/clusters/import", json={
            "name": "legacy", "hyperpod_cluster_name": "legacy-hp"})
        assert r.status_code == 202, r.text
        done = await wait_done(api, r.json()["id"])
        assert done["status"] == "succeeded", done["steps"]
        assert step(done, "connect")["status"] == "succeeded"

        status = (await api.get("/api/v1/clusters/legacy")).json()
        assert status["origin"] == "imported" and status["state"] == "active"
        assert status["hyperpod"]["status"] == "InService"
        deps = status["detected"]["dependencies"]
        assert deps["vpc-cni"]["installed"] and deps["coredns"]["installed"]
        assert not deps["cert-manager"]["installed"]
        assert not deps["nvidia-device-plugin"]["installed"]
        assert status["detected"]["operators"]["kuberay"] is True
        assert status["detected"]["operators"]["keda"] is False

        assert (await api.put("/api/v1/preferences/current-cluster",
                              json={"name": "legacy"})).json() == {"name": "legacy"}
        async with stack.client("viewer") as viewer:
            assert (await viewer.get("/api/v1/preferences/current-cluster")).json() == {
                "name": None}
        assert (await api.get("/api/v1/preferences/current-cluster")).json() == {
            "name": "legacy"}

        unconfirmed = await api.delete("/api/v1/clusters/legacy")
        assert unconfirmed.status_code == 428, unconfirmed.text  # a destroy needs confirm
        assert "detaches" in unconfirmed.json()["detail"]
        refused = await api.delete("/api/v1/clusters/legacy",
                                   params={"delete_resources": "true", "confirm": "true"})
        kept = await wait_done(api, refused.json()["id"])
        assert kept["status"] == "failed"
        assert step(kept, "hyperpod")["error"]["code"] == "conflict"
        assert "force" in step(kept, "hyperpod")["error"]["hint"]
        assert (await api.get("/api/v1/clusters/legacy")).json()["state"] == "failed"

        detach = await api.delete("/api/v1/clusters/legacy", params={"confirm": "true"})
        gone = await wait_done(api, detach.json()["id"])
        assert gone["status"] == "succeeded"
        assert step(gone, "eks")["phase"] == "skipped"
        assert (await api.get("/api/v1/clusters/legacy")).status_code == 404
    assert stack.aws("eks").list_clusters()["clusters"] == ["legacy"]
    assert not stack.ledger(action="DeleteCluster")


async def test_import_of_a_missing_cluster_fails_its_connect_step(stack: Stack) -> None:
    async with stack.client("operator") as operator:  # import is the admin's decision
        refused = await operator.post("/api/v1/clusters/import", json={"name": "nope"})
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    async with stack.client("admin") as api:
        r = await api.post("/api/v1/clusters/import", json={"name": "nope"})
        done = await wait_done(api, r.json()["id"])
    assert done["status"] == "failed"
    assert step(done, "connect")["error"]["code"] == "not_found"


PODPLANE = "arn:aws:iam::123456789012:user/sandbox-admin"  # the sandbox's test/test key
ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def someone_elses_cluster(stack: Stack, name: str,
                          mode: str = "API_AND_CONFIG_MAP") -> dict[str, Any]:
    """An EKS cluster made by another IAM user: only that user has an access entry."""
    iam = stack.aws("iam")
    iam.create_user(UserName="platform-team")
    key = iam.create_access_key(UserName="platform-team")["AccessKey"]
    eks = boto3.client("eks", endpoint_url=stack.aws_url, region_name="us-west-2",
                       aws_access_key_id=key["AccessKeyId"],
                       aws_secret_access_key=key["SecretAccessKey"])
    role = make_role(stack.aws, f"{name}-eks", ("eks.amazonaws.com",))
    stack.advance(LAG_SECONDS)
    eks.create_cluster(name=name, roleArn=role, resourcesVpcConfig={"subnetIds": []},
                       accessConfig={"authenticationMode": mode})
    stack.advance(15 * 60)
    return dict(eks.describe_cluster(name=name)["cluster"])


def podplane_kube_status(stack: Stack, cluster: dict[str, Any]) -> int:
    """What EKS answers podplane's own identity on this cluster (once the sandbox has started
    its API server, as kubectl's helper waits: it starts on the sandbox's loop, and a TLS
    handshake against a server still starting timed out once under load)."""
    stack.sandbox.call(stack.sandbox.kube.ready())
    ca = base64.b64decode(cluster["certificateAuthority"]["data"]).decode()
    token = eks_token(cluster["name"], "us-west-2", static_session("test", "test"))
    with httpx.Client(verify=ssl.create_default_context(cadata=ca)) as client:
        return client.get(f"{cluster['endpoint']}/api/v1/namespaces",
                          headers={"Authorization": f"Bearer {token}"}).status_code


async def test_import_creates_podplanes_access_entry(stack: Stack) -> None:
    cluster = someone_elses_cluster(stack, "team")
    assert podplane_kube_status(stack, cluster) == 401  # no access entry: EKS lets podplane nowhere
    async with stack.client("admin") as api:
        r = await api.post("/api/v1/clusters/import", json={"name": "team"})
        done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", done["steps"]
    eks = stack.aws("eks")
    assert PODPLANE in eks.list_access_entries(clusterName="team")["accessEntries"]
    policies = eks.list_associated_access_policies(clusterName="team", principalArn=PODPLANE)
    assert [(p["policyArn"], p["accessScope"]["type"])
            for p in policies["associatedAccessPolicies"]] == [(ADMIN_POLICY, "cluster")]
    assert podplane_kube_status(stack, cluster) == 200


async def test_import_without_access_entry_rights_says_what_to_run(stack: Stack) -> None:
    someone_elses_cluster(stack, "locked")
    stack.fault(kind="access_denied", service="eks", action="CreateAccessEntry")
    async with stack.client("admin") as api:
        r = await api.post("/api/v1/clusters/import", json={"name": "locked"})
        done = await wait_done(api, r.json()["id"])
    assert done["status"] == "failed"
    error = step(done, "connect")["error"]
    assert error["code"] == "kube_access_missing"
    assert (f"aws eks create-access-entry --cluster-name locked --principal-arn {PODPLANE}"
            in error["hint"])


async def test_import_of_a_config_map_cluster_names_the_principal_to_map(stack: Stack) -> None:
    someone_elses_cluster(stack, "old", mode="CONFIG_MAP")  # no access entries at all
    async with stack.client("admin") as api:
        r = await api.post("/api/v1/clusters/import", json={"name": "old"})
        done = await wait_done(api, r.json()["id"])
    assert done["status"] == "failed"
    error = step(done, "connect")["error"]
    assert error["code"] == "kube_unauthorized"
    assert f"Create an access entry for {PODPLANE}" in error["hint"]
