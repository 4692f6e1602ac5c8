"""Real AWS adapters (boto3). Only the endpoint differs between AWS and the sandbox."""

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.aws.ec2 import Ec2Adapter
from podplane.cloud.aws.eks import EksAdapter
from podplane.cloud.aws.hyperpod import HyperPodAdapter
from podplane.cloud.aws.quotas import QuotasAdapter
from podplane.cloud.aws.wiring import AwsAdapters, build_aws

__all__ = ["AwsAdapters", "AwsCaller", "Ec2Adapter", "EksAdapter", "HyperPodAdapter",
           "QuotasAdapter", "build_aws"]
