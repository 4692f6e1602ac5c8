"""One call for the composition root: every AWS adapter on one shared caller."""

from __future__ import annotations

from dataclasses import dataclass

from podplane.cloud.aws.account import AccountAdapter
from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.aws.ec2 import Ec2Adapter
from podplane.cloud.aws.eks import EksAdapter
from podplane.cloud.aws.hyperpod import HyperPodAdapter
from podplane.cloud.aws.quotas import QuotasAdapter
from podplane.cloud.ports_aws import RetryObserver


@dataclass(frozen=True)
class AwsAdapters:
    caller: AwsCaller
    eks: EksAdapter
    hyperpod: HyperPodAdapter
    ec2: Ec2Adapter
    quotas: QuotasAdapter
    account: AccountAdapter


def build_aws(region: str, endpoint_url: str | None = None,
              observer: RetryObserver | None = None) -> AwsAdapters:
    """`endpoint_url` None means AWS_ENDPOINT_URL or the real AWS endpoints."""
    caller = AwsCaller(region, endpoint_url=endpoint_url, observer=observer)
    return AwsAdapters(caller, EksAdapter(caller), HyperPodAdapter(caller), Ec2Adapter(caller),
                       QuotasAdapter(caller), AccountAdapter(caller))


def session_region() -> str | None:
    """AWS_REGION (the other AWS SDKs and CLI v2 read it; botocore does not), else the region
    boto3 resolves: AWS_DEFAULT_REGION, then the profile's `region`."""
    import os

    import boto3

    return os.environ.get("AWS_REGION") or boto3.session.Session().region_name
