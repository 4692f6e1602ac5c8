"""Every AWS port in one typed bundle: what the composition root hands to services."""

from __future__ import annotations

from dataclasses import dataclass

from podplane.cloud.ports_amp import AmpPort
from podplane.cloud.ports_aws import AccountPort, EksPort, HyperPodPort, QuotasPort
from podplane.cloud.ports_ec2 import Ec2Port
from podplane.cloud.ports_fsx import FsxPort
from podplane.cloud.ports_iam import IamPort, S3Port, StsPort
from podplane.cloud.ports_mlflow import MlflowPort


@dataclass(frozen=True)
class AwsPorts:
    region: str
    eks: EksPort
    hyperpod: HyperPodPort
    ec2: Ec2Port
    iam: IamPort
    s3: S3Port
    sts: StsPort
    quotas: QuotasPort
    account: AccountPort
    fsx: FsxPort
    amp: AmpPort
    mlflow: MlflowPort
