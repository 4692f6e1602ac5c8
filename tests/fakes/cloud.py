"""A whole `Cloud` on fakes, for steps that take the bundle rather than one port."""

from __future__ import annotations

from dataclasses import dataclass, field

from podplane.cloud.ports import AwsPorts
from podplane.services.cloud_access import Cloud
from tests.fakes.account import FakeAccount
from tests.fakes.amp import FakeAmp
from tests.fakes.ec2 import FakeEc2
from tests.fakes.eks import FakeEks
from tests.fakes.fsx import FakeFsx
from tests.fakes.hyperpod import FakeHyperPod
from tests.fakes.iam import FakeIam
from tests.fakes.kube import FakeKubeConnector
from tests.fakes.mlflow import FakeMlflow
from tests.fakes.quotas import FakeQuotas
from tests.fakes.s3 import FakeS3
from tests.fakes.sts import FakeSts


@dataclass
class Fakes:
    eks: FakeEks = field(default_factory=FakeEks)
    hyperpod: FakeHyperPod = field(default_factory=FakeHyperPod)
    ec2: FakeEc2 = field(default_factory=FakeEc2)
    iam: FakeIam = field(default_factory=FakeIam)
    s3: FakeS3 = field(default_factory=FakeS3)
    sts: FakeSts = field(default_factory=FakeSts)
    quotas: FakeQuotas = field(default_factory=FakeQuotas)
    account: FakeAccount = field(default_factory=FakeAccount)
    kube: FakeKubeConnector = field(default_factory=FakeKubeConnector)
    fsx: FakeFsx = field(default_factory=FakeFsx)
    amp: FakeAmp = field(default_factory=FakeAmp)
    mlflow: FakeMlflow = field(default_factory=FakeMlflow)

    def cloud(self) -> Cloud:
        aws = AwsPorts(region="us-west-2", eks=self.eks, hyperpod=self.hyperpod, ec2=self.ec2,
                       iam=self.iam, s3=self.s3, sts=self.sts, quotas=self.quotas,
                       account=self.account, fsx=self.fsx, amp=self.amp, mlflow=self.mlflow)
        return Cloud(aws, self.kube)
