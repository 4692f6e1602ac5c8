"""Cloud set-ups that pass the sandbox's AWS rules: an EKS cluster in its own VPC with a role
that trusts EKS, and a HyperPod cluster in that VPC whose execution role and lifecycle script
are real. `client(service)` makes a boto3 client against the sandbox."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.net_helpers import add_way_out

Client = Callable[[str], Any]
Advance = Callable[[float], Any]
TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                 "Principal": {"Service": "{svc}"}}]}


def role(client: Client, name: str, service: str, *policies: str) -> str:
    iam = client("iam")
    trust = json.dumps(TRUST).replace("{svc}", service)
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    for policy in policies:
        iam.attach_role_policy(RoleName=name, PolicyArn=policy)
    return str(arn)


def create_eks(client: Client, name: str, advance: Advance | None = None,
               **access: Any) -> None:
    """CreateCluster (not yet ACTIVE) in a new VPC with subnets in two AZs."""
    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{240 + i}.0/24",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"]
               for i, az in enumerate(("us-west-2a", "us-west-2b"))]
    arn = role(client, f"eks-{name}", "eks.amazonaws.com",
               "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy")
    if advance is not None:  # lag mode: EKS can assume a new role only once IAM propagated
        advance(LAG_SECONDS)
    client("eks").create_cluster(
        name=name, roleArn=arn, resourcesVpcConfig={"subnetIds": subnets},
        accessConfig={"authenticationMode": "API_AND_CONFIG_MAP", **access})


def create_hyperpod(client: Client, name: str, eks: str, instance_type: str,
                    count: int, advance: Advance | None = None) -> str:
    """CreateCluster on the ACTIVE EKS cluster `eks`, in its VPC; returns the execution role."""
    exec_role = role(client, f"exec-{name}", "sagemaker.amazonaws.com",
                     "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy")
    s3 = client("s3")
    bucket = f"sagemaker-{name}-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={
        "LocationConstraint": "us-west-2"})
    s3.put_object(Bucket=bucket, Key="scripts/on_create.sh", Body=b"#!/bin/bash\n")
    cluster = client("eks").describe_cluster(name=eks)["cluster"]
    ec2 = client("ec2")
    vpc = ec2.describe_subnets(SubnetIds=cluster["resourcesVpcConfig"]["subnetIds"][:1])[
        "Subnets"][0]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20",
                               AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName=f"sg-{name}", Description="nodes",
                                   VpcId=vpc)["GroupId"]
    if advance is not None:  # nodes need a way to S3 and EKS; the role needs IAM to propagate
        add_way_out(ec2, advance, vpc, "10.0.250.0/24", [subnet])
        advance(LAG_SECONDS)
    client("sagemaker").create_cluster(
        ClusterName=name, Orchestrator={"Eks": {"ClusterArn": cluster["arn"]}},
        VpcConfig={"Subnets": [subnet], "SecurityGroupIds": [sg]}, NodeRecovery="Automatic",
        InstanceGroups=[{"InstanceGroupName": "workers", "InstanceType": instance_type,
                         "InstanceCount": count, "ExecutionRole": exec_role,
                         "ThreadsPerCore": 1,
                         "LifeCycleConfig": {"SourceS3Uri": f"s3://{bucket}/scripts/",
                                             "OnCreate": "on_create.sh"}}])
    return exec_role
