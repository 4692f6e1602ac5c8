"""An account in the sandbox and podplane's identity in it: an IAM user with a policy and its
own access key, so STS, IAM simulation and access entries see that user (not the test's)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from podplane.cloud.aws.account import AccountAdapter
from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.aws.eks import EksAdapter
from podplane.cloud.aws.hyperpod import HyperPodAdapter
from podplane.cloud.aws.quotas import QuotasAdapter
from podplane.domain.aws_policy import POLICY
from podplane.domain.doctor import SLR_NAME, SLR_SERVICE
from podplane.services.diagnostics.checks import DoctorPorts
from tests.sandbox_aws.conftest import Box, start_box

REGION = "us-west-2"


@dataclass
class Account:
    box: Box

    def identity(self, name: str, policy: dict[str, Any] = POLICY) -> DoctorPorts:
        """A user `name` with `policy` attached; the ports sign with its own key."""
        iam = self.box.client("iam")
        iam.create_user(UserName=name)
        arn = iam.create_policy(PolicyName=f"{name}-policy",
                                PolicyDocument=json.dumps(policy))["Policy"]["Arn"]
        iam.attach_user_policy(UserName=name, PolicyArn=arn)
        key = iam.create_access_key(UserName=name)["AccessKey"]
        return self.ports(key["AccessKeyId"], key["SecretAccessKey"])

    def ports(self, key_id: str, secret: str) -> DoctorPorts:
        session = boto3.session.Session(aws_access_key_id=key_id,
                                        aws_secret_access_key=secret, region_name=REGION)
        caller = AwsCaller(REGION, endpoint_url=self.box.url, session=session, max_attempts=1,
                           botocore_attempts=1)
        return DoctorPorts(AccountAdapter(caller), QuotasAdapter(caller),
                           HyperPodAdapter(caller), EksAdapter(caller))

    def add_service_linked_role(self) -> None:
        """The role HyperPod makes on first use, under its real name and path."""
        trust = {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": SLR_SERVICE},
            "Action": "sts:AssumeRole"}]}
        self.box.client("iam").create_role(
            RoleName=SLR_NAME, Path=f"/aws-service-role/{SLR_SERVICE}/",
            AssumeRolePolicyDocument=json.dumps(trust))

    def eks_cluster(self, name: str) -> None:
        """An ACTIVE EKS cluster with a real role and subnets in two AZs (AWS's minimum)."""
        iam, ec2 = self.box.client("iam"), self.box.client("ec2")
        role = iam.create_role(RoleName=f"{name}-eks", AssumeRolePolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{
                "Effect": "Allow", "Action": "sts:AssumeRole",
                "Principal": {"Service": "eks.amazonaws.com"}}]}))["Role"]["Arn"]
        iam.attach_role_policy(RoleName=f"{name}-eks",
                               PolicyArn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy")
        vpc = ec2.create_vpc(CidrBlock="10.8.0.0/16")["Vpc"]["VpcId"]
        subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.8.{i}.0/24",
                                     AvailabilityZone=az)["Subnet"]["SubnetId"]
                   for i, az in enumerate(("us-west-2a", "us-west-2b"))]
        self.box.advance(300)  # past IAM propagation (lag mode)
        self.box.client("eks").create_cluster(
            name=name, roleArn=role, resourcesVpcConfig={"subnetIds": subnets},
            accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
        self.box.advance(900)  # EKS takes minutes to become ACTIVE

    def set_quota(self, instance_type: str, value: int | None) -> None:
        """An applied value; None leaves only AWS's default."""
        self.box.control("PUT", "/quotas", json={"instance_type": instance_type,
                                                  "value": value})


def without(action: str, policy: dict[str, Any] = POLICY) -> dict[str, Any]:
    """`policy` with one action taken out of every statement."""
    out = copy.deepcopy(policy)
    for stmt in out["Statement"]:
        stmt["Action"] = [a for a in stmt["Action"] if a != action]
    out["Statement"] = [s for s in out["Statement"] if s["Action"]]
    return out


@pytest.fixture
def account(tmp_path: Path) -> Iterator[Account]:
    box = start_box(tmp_path)
    yield Account(box)
    box.sandbox.stop()
