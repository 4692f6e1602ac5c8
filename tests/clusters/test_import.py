"""Import a cluster made outside podplane (straight through the sandbox's AWS API): connection
test, state detection, then it is managed like ours; deleting it only detaches it."""

from __future__ import annotations

from pathlib import Path

from tests.clusters.helpers import step, wait_done
from tests.stack import Stack

CRDS = Path(__file__).parents[2] / ".." / "shared" / "crds"
RAYJOB_CRD = CRDS / "kuberay" / "ray.io_rayjobs.yaml"


def make_outside_cluster(stack: Stack) -> None:
    ec2 = stack.aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.9.{i}.0/24",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"]
               for i, az in enumerate(["us-west-2a", "us-west-2b"])]
    sg = ec2.create_security_group(GroupName="legacy", Description="nodes",
                                   VpcId=vpc)["GroupId"]
    eks = stack.aws("eks")
    eks.create_cluster(name="legacy", roleArn="arn:aws:iam::123456789012:role/r",
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
                         "InstanceCount": 1, "ExecutionRole": "arn:aws:iam::123456789012:role/x",
                         "LifeCycleConfig": {"SourceS3Uri": "s3://b/lc/",
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

        refused = await api.delete("/api/v1/clusters/legacy",
                                   params={"delete_resources": "true"})
        kept = await wait_done(api, refused.json()["id"])
        assert kept["status"] == "failed"
        assert step(kept, "hyperpod")["error"]["code"] == "conflict"
        assert "force" in step(kept, "hyperpod")["error"]["hint"]
        assert (await api.get("/api/v1/clusters/legacy")).json()["state"] == "failed"

        detach = await api.delete("/api/v1/clusters/legacy")
        gone = await wait_done(api, detach.json()["id"])
        assert gone["status"] == "succeeded"
        assert step(gone, "eks")["phase"] == "skipped"
        assert (await api.get("/api/v1/clusters/legacy")).status_code == 404
    assert stack.aws("eks").list_clusters()["clusters"] == ["legacy"]
    assert not stack.ledger(action="DeleteCluster")


async def test_import_of_a_missing_cluster_fails_its_connect_step(stack: Stack) -> None:
    async with stack.client("operator") as api:
        r = await api.post("/api/v1/clusters/import", json={"name": "nope"})
        done = await wait_done(api, r.json()["id"])
    assert done["status"] == "failed"
    assert step(done, "connect")["error"]["code"] == "not_found"
