"""What HyperPod checks before it accepts CreateCluster / UpdateCluster (docs/sandbox.md,
"SageMaker HyperPod"): the network must be the EKS cluster's, and on-start deep health checks
must suit the instance type."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws import moto_side
from podplane_sandbox.aws.errors import sm_validation
from podplane_sandbox.aws.hyperpod.instance_facts import accelerated, efa_capable


def eks_vpc(eks_cluster: dict[str, Any], region: str) -> str | None:
    """The EKS cluster's VPC: the VPC of its subnets as EC2 knows them (what EKS itself
    derives), else what EKS recorded."""
    vpc_config = eks_cluster.get("resourcesVpcConfig") or {}
    for subnet in vpc_config.get("subnetIds") or []:
        found = moto_side.subnet_vpc(subnet, region=region)
        if found:
            return found[0]
    return vpc_config.get("vpcId")


def check_vpc_config(vpc_config: dict[str, Any] | None, vpc: str | None, eks_name: str,
                     region: str) -> None:
    """Every subnet and security group must exist in EC2 and sit in the EKS cluster's VPC
    (HyperPod EKS prerequisites: the cluster's VPC is the EKS cluster's). Unknown ids are
    refused, never treated as "any AZ"."""
    if not vpc_config:
        return
    for subnet in vpc_config.get("Subnets") or []:
        found = moto_side.subnet_vpc(subnet, region=region)
        if found is None:
            raise sm_validation(f"The subnet ID '{subnet}' does not exist.")
        if vpc and found[0] != vpc:
            raise sm_validation(f"Subnet {subnet} is in {found[0]}, not in the VPC {vpc} of "
                                f"the EKS cluster {eks_name}.")
    for group in vpc_config.get("SecurityGroupIds") or []:
        group_vpc = moto_side.security_group_vpc(group, region=region)
        if group_vpc is None:
            raise sm_validation(f"The security group '{group}' does not exist.")
        if vpc and group_vpc != vpc:
            raise sm_validation(f"Security group {group} is in {group_vpc}, not in the VPC "
                                f"{vpc} of the EKS cluster {eks_name}.")


def check_deep_health_checks(spec: dict[str, Any]) -> None:
    """On-start deep health checks exist for GPU and Trainium instances only; the
    connectivity check (NCCL / NCCOM across nodes) also needs EFA (AWS docs, "Deep health
    checks"). The exact wording of AWS's refusal is not published: this one is ours."""
    checks = spec.get("OnStartDeepHealthChecks") or []
    itype, name = spec.get("InstanceType") or "", spec.get("InstanceGroupName")
    if checks and not accelerated(itype):
        raise sm_validation(f"OnStartDeepHealthChecks are not supported for instance type "
                            f"{itype} of instance group {name}: deep health checks run on "
                            "GPU and Trainium instances only.")
    if "InstanceConnectivity" in checks and not efa_capable(itype):
        raise sm_validation(f"InstanceConnectivity deep health check is not supported for "
                            f"instance type {itype} of instance group {name}: it needs an "
                            "EFA-enabled instance type.")
