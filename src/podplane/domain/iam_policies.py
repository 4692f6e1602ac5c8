"""The IAM documents podplane writes: trust policies and least-privilege inline policies.

The HyperPod execution role follows AWS's reference role stack for HyperPod on EKS
(awslabs/awsome-distributed-training, 1.architectures/7.sagemaker-hyperpod-eks,
cfn-templates/nested-stacks/sagemaker-iam-role-stack.yaml): the AWS managed
AmazonSageMakerClusterInstanceRolePolicy, plus what an EKS node needs (VPC CNI ENI/IP actions,
ECR pull, EKS Pod Identity) and read access to the lifecycle-script bucket. The managed policy
reads only `sagemaker-*` buckets, so podplane's bucket needs its own statement.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.arns import managed_policy, partition, s3_arn

VERSION = "2012-10-17"
# The reference stack grants these on "*": ENI and ECR actions take no narrower resource for
# the CNI's use (AmazonEKS_CNI_Policy does the same), and Pod Identity is per-association.
NODE_ACTIONS = (
    "ec2:AssignPrivateIpAddresses", "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission", "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcs", "ec2:DescribeDhcpOptions", "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups", "ec2:DetachNetworkInterface",
    "ec2:ModifyNetworkInterfaceAttribute", "ec2:UnassignPrivateIpAddresses",
    "ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetAuthorizationToken",
    "ecr:GetDownloadUrlForLayer", "eks-auth:AssumeRoleForPodIdentity",
    "cloudwatch:DescribeAlarms",
)
LOG_ACTIONS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogStreams",
               "logs:PutLogEvents")


def trust(service: str) -> dict[str, Any]:
    """Who may assume a role. TagSession is what EKS Pod Identity needs besides AssumeRole."""
    return {"Version": VERSION, "Statement": [{
        "Effect": "Allow", "Principal": {"Service": service},
        "Action": ["sts:AssumeRole", "sts:TagSession"]}]}


def eks_cluster_policies(region: str) -> tuple[str, ...]:
    return (managed_policy(region, "AmazonEKSClusterPolicy"),)


def execution_role_policies(region: str) -> tuple[str, ...]:
    return (managed_policy(region, "AmazonSageMakerClusterInstanceRolePolicy"),)


def execution_role_inline(region: str, account: str, bucket: str,
                          scripts_prefix: str) -> dict[str, Any]:
    """Node permissions, cluster logs, and the lifecycle scripts: the bucket may be listed, but
    only objects under the scripts' prefix read (the bucket also holds users' data)."""
    part = partition(region)
    log_group = f"arn:{part}:logs:{region}:{account}:log-group:/aws/sagemaker/Clusters/*"
    return {"Version": VERSION, "Statement": [
        {"Sid": "EksNode", "Effect": "Allow", "Action": list(NODE_ACTIONS), "Resource": "*"},
        {"Sid": "TagNetworkInterfaces", "Effect": "Allow", "Action": ["ec2:CreateTags"],
         "Resource": f"arn:{part}:ec2:{region}:{account}:network-interface/*"},
        {"Sid": "ClusterLogs", "Effect": "Allow", "Action": list(LOG_ACTIONS),
         "Resource": [log_group, f"{log_group}:log-stream:*"]},
        {"Sid": "LifecycleScripts", "Effect": "Allow",
         "Action": ["s3:ListBucket"], "Resource": s3_arn(region, bucket)},
        {"Sid": "LifecycleScriptsRead", "Effect": "Allow", "Action": ["s3:GetObject"],
         "Resource": s3_arn(region, f"{bucket}/{scripts_prefix}*")},
    ]}


def bucket_policy(region: str, bucket: str) -> dict[str, Any]:
    """Least privilege for the Mountpoint CSI driver: this bucket, plus reading the region's
    public JumpStart bucket (model downloads, domain/inference/download_sources.py): that
    bucket is another account's, so its policy alone does not let this role read it (IAM User
    Guide, "Cross-account policy evaluation logic")."""
    jumpstart = f"jumpstart-cache-prod-{region}"
    return {"Version": VERSION, "Statement": [
        {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": s3_arn(region, bucket)},
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload",
                                       "s3:DeleteObject"],
         "Resource": s3_arn(region, f"{bucket}/*")},
        {"Sid": "JumpStartRead", "Effect": "Allow", "Action": ["s3:ListBucket", "s3:GetObject"],
         "Resource": [s3_arn(region, jumpstart), s3_arn(region, f"{jumpstart}/*")]}]}
