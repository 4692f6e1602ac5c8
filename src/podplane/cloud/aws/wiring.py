"""Every AWS adapter on one shared caller, handed out as ports."""

from __future__ import annotations

from podplane.cloud.aws.account import AccountAdapter
from podplane.cloud.aws.amp import AmpAdapter
from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.aws.ec2 import Ec2Adapter
from podplane.cloud.aws.eks import EksAdapter
from podplane.cloud.aws.fsx import FsxAdapter
from podplane.cloud.aws.hyperpod import HyperPodAdapter
from podplane.cloud.aws.iam import IamAdapter, S3Adapter, StsAdapter
from podplane.cloud.aws.mlflow import MlflowAdapter
from podplane.cloud.aws.quotas import QuotasAdapter
from podplane.cloud.ports import AwsPorts
from podplane.cloud.ports_aws import RetryObserver


def build_aws(region: str, endpoint_url: str | None = None,
              observer: RetryObserver | None = None, boundary: str | None = None) -> AwsPorts:
    """`endpoint_url` None means AWS_ENDPOINT_URL or the real AWS endpoints; `boundary` the
    permissions boundary of every role podplane makes."""
    caller = AwsCaller(region, endpoint_url=endpoint_url, observer=observer)
    return AwsPorts(region=region, eks=EksAdapter(caller), hyperpod=HyperPodAdapter(caller),
                    ec2=Ec2Adapter(caller), iam=IamAdapter(caller, boundary),
                    s3=S3Adapter(caller),
                    sts=StsAdapter(caller), quotas=QuotasAdapter(caller),
                    account=AccountAdapter(caller), fsx=FsxAdapter(caller),
                    amp=AmpAdapter(caller), mlflow=MlflowAdapter(caller))


def session_region() -> str | None:
    """AWS_REGION (the other AWS SDKs and CLI v2 read it; botocore does not), else the region
    boto3 resolves: AWS_DEFAULT_REGION, then the profile's `region`."""
    import os

    import boto3

    return os.environ.get("AWS_REGION") or boto3.session.Session().region_name
