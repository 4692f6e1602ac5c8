"""An in-process sandbox on a free port with the clock frozen (speed 0); tests step it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config

from podplane_sandbox.main import Sandbox
from tests.net_helpers import add_way_out
from tests.sandbox_aws.iam_setup import prepare
from tests.sandbox_aws.shapes import ShapeRecorder

ROLE = "arn:aws:iam::123456789012:role/podplane-test"
# An advance runs every timer it passes (node boots, lifecycle scripts): on a loaded CI
# machine that can take longer than httpx's 5 s default.
CONTROL_TIMEOUT = 60.0


@dataclass
class Box:
    sandbox: Sandbox
    shapes: ShapeRecorder

    @property
    def url(self) -> str:
        return self.sandbox.aws_url

    def client(self, service: str, attempts: int = 1) -> Any:
        client = boto3.client(service, endpoint_url=self.url, region_name="us-west-2",
                              aws_access_key_id="test", aws_secret_access_key="test",
                              config=Config(retries={"mode": "standard",
                                                     "total_max_attempts": attempts}))
        return self.shapes.attach(client)

    def advance(self, seconds: float) -> dict[str, Any]:
        r = httpx.post(f"{self.url}/_sandbox/clock/advance", json={"seconds": seconds},
                       headers=self.sandbox.control_headers, timeout=CONTROL_TIMEOUT)
        r.raise_for_status()
        return dict(r.json())

    def control(self, method: str, path: str, **kw: Any) -> Any:
        kw.setdefault("timeout", CONTROL_TIMEOUT)
        r = httpx.request(method, f"{self.url}/_sandbox{path}",
                          headers=self.sandbox.control_headers, **kw)
        r.raise_for_status()
        return r.json()

    def ledger(self, **query: str) -> list[dict[str, Any]]:
        return list(self.control("GET", "/ledger", params=query))


def start_box(home: Path, seed: int = 7) -> Box:
    sandbox = Sandbox(home, aws_port=0, speed=0, seed=seed,
                      kube_endpoint="https://127.0.0.1:16443")
    sandbox.start()
    box = Box(sandbox, ShapeRecorder())
    prepare(box.client, box.advance, ROLE.rsplit("/", 1)[-1])
    return box


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Box]:
    b = start_box(tmp_path)
    yield b
    b.sandbox.stop()
    assert b.shapes.errors == [], b.shapes.errors  # every emulated response matched botocore


def network(box: Box, az: str = "us-west-2a") -> tuple[str, str]:
    """A VPC with one subnet in `az` (moto) -> (subnet_id, security_group_id)."""
    ec2 = box.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20",
                               AvailabilityZone=az)["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName="efa", Description="efa",
                                   VpcId=vpc)["GroupId"]
    way_out(box, vpc, subnet)
    return subnet, sg


def way_out(box: Box, vpc: str, private_subnet: str) -> dict[str, str]:
    return add_way_out(box.client("ec2"), box.advance, vpc, "10.0.255.0/24", [private_subnet])


def second_subnet(box: Box, az: str = "us-west-2b") -> str:
    """Another subnet, in `az`, of the VPC `network()` made."""
    ec2 = box.client("ec2")
    vpc = next(v["VpcId"] for v in ec2.describe_vpcs()["Vpcs"] if not v.get("IsDefault"))
    return str(ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.16.0/20",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"])


def group(name: str, itype: str, count: int, **extra: Any) -> dict[str, Any]:
    return {"InstanceGroupName": name, "InstanceType": itype, "InstanceCount": count,
            "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lc/scripts/",
                                "OnCreate": "on_create.sh"},
            "ExecutionRole": ROLE, "ThreadsPerCore": 1, **extra}


def vpc_of(box: Box, subnet: str) -> str:
    return str(box.client("ec2").describe_subnets(SubnetIds=[subnet])["Subnets"][0]["VpcId"])


def ensure_eks(box: Box, subnet: str) -> str:
    """An ACTIVE EKS cluster in the VPC of `subnet` (HyperPod refuses anything else: an EKS
    cluster not ACTIVE, or subnets outside its VPC); the first is `eks1`. Returns its ARN."""
    eks, ec2 = box.client("eks"), box.client("ec2")
    vpc = vpc_of(box, subnet)
    names = eks.list_clusters()["clusters"]
    for name in names:
        own = eks.describe_cluster(name=name)["cluster"]["resourcesVpcConfig"]["subnetIds"]
        known = ec2.describe_subnets(Filters=[{"Name": "subnet-id", "Values": own}])["Subnets"]
        if any(s["VpcId"] == vpc for s in known):
            break
    else:
        name = f"eks{len(names) + 1}"
        own = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{240 + i}.0/24",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"]
               for i, az in enumerate(("us-west-2a", "us-west-2b"))]
        eks.create_cluster(name=name, roleArn=ROLE,
                           accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"},
                           resourcesVpcConfig={"subnetIds": own})
    if eks.describe_cluster(name=name)["cluster"]["status"] != "ACTIVE":
        box.advance(700)
    return str(eks.describe_cluster(name=name)["cluster"]["arn"])


def hyperpod_cluster(box: Box, name: str, groups: list[dict[str, Any]],
                     subnet: str | None = None, sg: str | None = None, **extra: Any) -> str:
    """A HyperPod cluster on EKS; without `subnet`/`sg`, in a new VPC with one subnet in
    us-west-2a."""
    if subnet is None or sg is None:
        subnet, sg = network(box)
    eks_arn = ensure_eks(box, subnet)
    sm = box.client("sagemaker")
    return str(sm.create_cluster(
        ClusterName=name, InstanceGroups=groups, NodeRecovery="Automatic",
        VpcConfig={"Subnets": [subnet], "SecurityGroupIds": [sg]},
        Orchestrator={"Eks": {"ClusterArn": eks_arn}}, **extra)["ClusterArn"])
