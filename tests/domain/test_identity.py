"""Derived names, ARN partitions, the IAM documents podplane writes, the role-refusal rule and
its retry, and the packaged lifecycle script."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from typing import Any

import pytest

from podplane.domain.arns import managed_policy, partition
from podplane.domain.cloud_errors import ROLE_NOT_READY, classify
from podplane.domain.clusters import shared_bucket
from podplane.domain.errors import CloudError
from podplane.domain.iam_policies import execution_role_inline
from podplane.domain.names import check_cluster_name
from podplane.services.clusters.identity import lifecycle_script, role_names
from podplane.services.iam_retry import PROPAGATION_SECONDS, while_iam_propagates

ACCOUNT = "123456789012"
NAME_54 = "a" * 50 + "-b54"
NAME_63 = "c" * 59 + "-d63"
BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")  # S3 bucket naming rules


@pytest.mark.parametrize("name", [NAME_54, NAME_63])
def test_long_names_keep_account_and_region_and_fit(name: str) -> None:
    check_cluster_name(name)
    for region in ("us-west-2", "ap-southeast-2", "us-gov-west-1"):
        bucket = shared_bucket(name, ACCOUNT, region)
        assert len(bucket) <= 63 and BUCKET.match(bucket), bucket
        assert f"-{ACCOUNT}-{region}-" in bucket
        assert all(len(role) <= 64 for role in role_names(name, region).values())


def test_names_never_collide_when_only_the_cut_part_differs() -> None:
    one, two = NAME_63, NAME_63[:-1] + "x"
    assert shared_bucket(one, ACCOUNT, "us-west-2") != shared_bucket(two, ACCOUNT, "us-west-2")
    assert set(role_names(one, "us-west-2").values()).isdisjoint(
        role_names(two, "us-west-2").values())
    assert shared_bucket(one, ACCOUNT, "us-west-2") != shared_bucket(one, "999999999999",
                                                                     "us-west-2")
    assert role_names("alpha", "us-west-2") != role_names("alpha", "eu-west-1")
    assert role_names("alpha", "us-west-2") == role_names("alpha", "us-west-2")  # stable


def test_short_names_stay_readable() -> None:
    assert shared_bucket("alpha", ACCOUNT, "us-west-2").startswith(
        f"podplane-alpha-{ACCOUNT}-us-west-2-")
    assert role_names("alpha", "us-west-2")["eks"].startswith("podplane-alpha-eks-")


def test_partition_comes_from_the_region() -> None:
    assert [partition(r) for r in ("us-west-2", "cn-north-1", "us-gov-west-1")] == [
        "aws", "aws-cn", "aws-us-gov"]
    assert managed_policy("cn-northwest-1", "AmazonEKSClusterPolicy") == \
        "arn:aws-cn:iam::aws:policy/AmazonEKSClusterPolicy"
    doc = execution_role_inline("us-gov-west-1", ACCOUNT, "b", "scripts/")
    resources = [r for s in doc["Statement"] for r in _list(s["Resource"]) if r != "*"]
    assert resources and all(r.startswith("arn:aws-us-gov:") for r in resources)


def test_execution_role_reads_only_the_scripts_and_scopes_what_the_reference_scopes() -> None:
    doc = execution_role_inline("us-west-2", ACCOUNT, "bkt", "podplane/lifecycle/")
    by_action = {a: s["Resource"] for s in doc["Statement"] for a in s["Action"]}
    assert by_action["s3:GetObject"] == "arn:aws:s3:::bkt/podplane/lifecycle/*"
    assert by_action["s3:ListBucket"] == "arn:aws:s3:::bkt"
    assert by_action["ec2:CreateTags"].endswith(":network-interface/*")
    assert all(r != "*" for r in _list(by_action["logs:PutLogEvents"]))
    assert by_action["eks-auth:AssumeRoleForPodIdentity"] == "*"


@pytest.mark.parametrize("code,message", [
    ("InvalidParameterException", "Role with arn: arn:aws:iam::1:role/r, could not be assumed "
     "because it does not exist or the trusted entity is not correct"),
    ("ValidationException", "Could not assume role arn:aws:iam::1:role/r. Please ensure that "
     "the role exists and allows principal 'sagemaker.amazonaws.com' to assume the role."),
    ("InvalidParameterException", "Role provided in the request does not exist"),
])
def test_role_refusals_are_classified_apart(code: str, message: str) -> None:
    err = classify(code, message, "eks.create_cluster")
    assert err.code == ROLE_NOT_READY and err.hint


def test_other_invalid_parameters_stay_invalid() -> None:
    assert classify("InvalidParameterException", "Subnets specified must be in at least two "
                    "different AZs", "eks.create_cluster").code == "cloud_invalid"


class FakeStep:
    def __init__(self) -> None:
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    async def note(self, message: str, /, **detail: Any) -> None:
        pass


def test_the_retry_waits_about_a_minute_then_names_the_fix() -> None:
    step, calls = FakeStep(), []

    async def refused() -> None:
        calls.append(1)
        raise classify("InvalidParameterException", "Role with arn: x, could not be assumed",
                       "eks.create_cluster")

    with pytest.raises(CloudError) as err:
        asyncio.run(while_iam_propagates(step, "arn:r", refused))  # type: ignore[arg-type]
    assert err.value.code == "iam_role_not_assumable" and "trust policy" in str(err.value.hint)
    assert PROPAGATION_SECONDS <= sum(step.slept) <= 2 * PROPAGATION_SECONDS
    assert len(calls) == len(step.slept) + 1


def test_the_retry_returns_once_the_role_works_and_passes_other_errors() -> None:
    step, answers = FakeStep(), iter([ROLE_NOT_READY, ROLE_NOT_READY, None])

    async def flaky() -> str:
        if next(answers):
            raise CloudError("refused", code=ROLE_NOT_READY)
        return "made"

    assert asyncio.run(while_iam_propagates(step, "arn:r", flaky)) == "made"  # type: ignore[arg-type]
    assert step.slept == [2.0, 4.0]

    async def broken() -> None:
        raise CloudError("bad subnet", code="cloud_invalid")

    with pytest.raises(CloudError, match="bad subnet"):
        asyncio.run(while_iam_propagates(FakeStep(), "arn:r", broken))  # type: ignore[arg-type]


def test_the_packaged_lifecycle_script_is_valid_bash_that_moves_containerd_and_kubelet() -> None:
    script = lifecycle_script().decode()
    assert script.startswith("#!/bin/bash\n")
    assert "/opt/sagemaker" in script and "/var/lib/kubelet" in script
    assert "containerd" in script
    bash = shutil.which("bash")
    assert bash is not None
    subprocess.run([bash, "-n"], input=script, text=True, check=True)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
