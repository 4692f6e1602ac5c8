"""A managed cluster set up directly in the sandbox (VPC, EKS, HyperPod with one group) and
registered in our `clusters` table as imported, so group and node tests need no create
pipeline. Helpers wait on operations the way clients do (long-poll), on stepped virtual time."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.network import COMPUTE_TAG
from podplane.services.cloud_access import cloud_of
from podplane.store import clusters as cluster_rows
from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.net_helpers import add_way_out
from tests.sandbox_aws.iam_setup import make_role, put_scripts, read_scripts
from tests.stack import Stack

CLUSTER = "gpu"
FIRST_GROUP = "workers"
FIRST_TYPE = "ml.g5.8xlarge"
ROLE = "arn:aws:iam::123456789012:role/podplane-hp-exec"
LIFECYCLE = {"SourceS3Uri": "s3://podplane-gpu-lifecycle/scripts/", "OnCreate": "on_create.sh"}
TERMINAL = {"succeeded", "failed", "cancelled"}


@dataclass
class Cluster:
    stack: Stack
    name: str
    vpc_id: str
    compute_subnet: str
    security_group: str

    def nodes_of(self, group: str) -> list[dict[str, Any]]:
        nodes = self.stack.aws("sagemaker").list_cluster_nodes(ClusterName=self.name)
        return [n for n in nodes["ClusterNodeSummaries"] if n["InstanceGroupName"] == group]

    def describe(self) -> dict[str, Any]:
        return dict(self.stack.aws("sagemaker").describe_cluster(ClusterName=self.name))

    def updates(self) -> list[dict[str, Any]]:
        return self.stack.ledger(service="sagemaker", action="UpdateCluster")

    async def kube_nodes(self, **labels: str) -> list[dict[str, Any]]:
        """Kubernetes Nodes after the sandbox's controllers caught up with the clock."""
        self.stack.sandbox.call(self.stack.sandbox.kube.settle())
        selector = ",".join(f"sagemaker.amazonaws.com/{k.replace('_', '-')}={v}"
                            for k, v in labels.items())
        out = self.stack.kubectl("get", "nodes", "-l", selector, "-o", "json")
        return list(json.loads(out)["items"])


def _network(stack: Stack) -> tuple[str, str, list[str], str]:
    ec2 = stack.aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    compute = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20", AvailabilityZone="us-west-2a",
                                TagSpecifications=[{"ResourceType": "subnet", "Tags": [
                                    {"Key": COMPUTE_TAG, "Value": "true"}]}])["Subnet"]["SubnetId"]
    private = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{16 + i}.0/24",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"]
               for i, az in enumerate(["us-west-2a", "us-west-2b"])]
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.associate_route_table(RouteTableId=table, SubnetId=compute)
    add_way_out(ec2, stack.advance, vpc, "10.0.32.0/24", [], private_table=table)
    sg = ec2.create_security_group(GroupName="hp-nodes", Description="nodes",
                                   VpcId=vpc)["GroupId"]
    return vpc, compute, private, sg


def _identity(stack: Stack) -> None:
    """The roles and scripts AWS checks (docs/sandbox.md, "IAM and identity"), propagated."""
    make_role(stack.aws, "eks", ("eks.amazonaws.com",))
    make_role(stack.aws, ROLE.rsplit("/", 1)[-1], ("sagemaker.amazonaws.com",),
              read_scripts("podplane-gpu-lifecycle"))
    put_scripts(stack.aws, "podplane-gpu-lifecycle", "scripts/on_create.sh")
    # past the lag, by a round 20 s: group tests step the clock in the sandbox Kubernetes
    # controllers' 5 and 10 s periods, and a shift off that grid changes what they observe
    stack.advance(max(20.0, LAG_SECONDS + 1))


def _create(stack: Stack, compute: str, private: list[str], sg: str,
            node_recovery: str = "Automatic") -> None:
    _identity(stack)
    eks = stack.aws("eks").create_cluster(
        name=CLUSTER, roleArn="arn:aws:iam::123456789012:role/eks",
        resourcesVpcConfig={"subnetIds": private, "securityGroupIds": [sg]},
        accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})["cluster"]
    stack.advance(15 * 60)
    stack.aws("sagemaker").create_cluster(
        ClusterName=CLUSTER, Orchestrator={"Eks": {"ClusterArn": eks["arn"]}},
        VpcConfig={"SecurityGroupIds": [sg], "Subnets": [compute]}, NodeRecovery=node_recovery,
        InstanceGroups=[{
            "InstanceGroupName": FIRST_GROUP, "InstanceType": FIRST_TYPE, "InstanceCount": 1,
            "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE, "ThreadsPerCore": 1,
            "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]}])
    stack.advance(15 * 60)
    status = stack.aws("sagemaker").describe_cluster(ClusterName=CLUSTER)["ClusterStatus"]
    assert status == "InService", status


@pytest.fixture
async def cluster(stack: Stack, imported_world: str) -> AsyncIterator[Cluster]:
    """The imported cluster: `stack` (asked for with `imported_world`) is a copy of the run's
    world `build_imported` made (tests/golden.py)."""
    async with stack.app.state.podplane.sessions() as db:
        row = await cluster_rows.get(db, CLUSTER)
    assert row is not None, "the imported golden has no cluster row"
    net = row.facts["network"]
    yield Cluster(stack, CLUSTER, net["vpc_id"], net["compute_subnets"][0],
                  net["security_group_id"])


async def build_imported(stack: Stack) -> dict[str, Any]:
    """The golden imported world: network, EKS + HyperPod made in the sandbox, the row."""
    vpc, compute, private, sg = _network(stack)
    _create(stack, compute, private, sg)
    async with stack.app.state.podplane.sessions.begin() as db:
        await cluster_rows.upsert(
            db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
            hyperpod_cluster_name=CLUSTER, origin="imported", state="active", spec={},
            facts={"network": {"vpc_id": vpc, "vpc_cidr": "10.0.0.0/16",
                               "compute_subnets": [compute], "security_group_id": sg}})
    await _device_plugins(stack)
    return {"vpc": vpc, "compute": compute, "sg": sg}


async def _device_plugins(stack: Stack) -> None:
    """The cluster's device plugins and health agent, as podplane renders them: without them a
    GPU node advertises no `nvidia.com/gpu` and reports no fault labels (the sandbox's kubelet
    and node controller, like real ones)."""
    kube = await cloud_of(stack.app.state.podplane).kube_for(CLUSTER)
    for unit in ("nvidia-device-plugin", "aws-efa-k8s-device-plugin",
                 "hyperpod-health-monitoring-agent"):
        version = next(u.version for u in CORE_UNITS if u.name == unit)
        for obj in manifests.for_unit(unit, version or "", "us-west-2"):
            await kube.apply(obj, force=True)
    stack.advance(5)


async def finish(client: httpx.AsyncClient, op: dict[str, Any]) -> dict[str, Any]:
    """Long-poll the operation to a terminal state (the engine steps virtual time)."""
    for _ in range(60):
        r = await client.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20})
        assert r.status_code == 200, r.text
        op = r.json()
        if op["status"] in TERMINAL:
            return op
    raise AssertionError(f"operation {op['id']} did not finish: {op}")


def labels_of(node: dict[str, Any]) -> dict[str, str]:
    return dict(node["metadata"].get("labels") or {})


def ready(node: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in node.get("status", {}).get("conditions", []))
