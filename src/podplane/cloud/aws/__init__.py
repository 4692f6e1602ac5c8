"""Real AWS adapters (boto3). Only the endpoint differs between AWS and the sandbox."""

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.aws.ec2 import Ec2Adapter
from podplane.cloud.aws.eks import EksAdapter
from podplane.cloud.aws.hyperpod import HyperPodAdapter
from podplane.cloud.aws.iam import IamAdapter, S3Adapter, StsAdapter
from podplane.cloud.aws.quotas import QuotasAdapter
from podplane.cloud.aws.wiring import build_aws

__all__ = ["AwsCaller", "Ec2Adapter", "EksAdapter", "HyperPodAdapter", "IamAdapter",
           "QuotasAdapter", "S3Adapter", "StsAdapter", "build_aws"]
