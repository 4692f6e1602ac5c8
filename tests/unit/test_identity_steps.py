"""Cluster identity on the IAM and S3 fakes: roles found or created under hashed names,
deleted only when tagged as ours; the scripts bucket and its lifecycle script."""

from __future__ import annotations

import json

import pytest

from podplane.domain.errors import Conflict
from podplane.services.clusters.identity import (
    delete_identity,
    ensure_bucket,
    ensure_lifecycle_script,
    ensure_role,
    legacy_role_names,
    lifecycle_script,
    role_names,
)
from tests.fakes.iam import FakeIam
from tests.fakes.s3 import FakeS3

EKS_POLICY = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
OURS = [{"Key": "podplane:cluster", "Value": "alpha"}, {"Key": "podplane:managed", "Value": "true"}]


def test_role_names_are_hashed_per_region_and_fit_iam() -> None:
    west, east = role_names("alpha", "us-west-2"), role_names("alpha", "us-east-1")
    assert west["eks"] != east["eks"] and west["eks"].startswith("podplane-alpha")
    long = role_names("x" * 80, "us-west-2")
    assert all(len(n) <= 64 for n in long.values()) and len(set(long.values())) == 4


async def test_a_missing_role_is_created_with_trust_tags_and_policies() -> None:
    iam = FakeIam()
    name = role_names("alpha", "us-west-2")["eks"]
    arn = await ensure_role(iam, "alpha", name, "eks.amazonaws.com", (EKS_POLICY,),
                            inline={"Version": "2012-10-17", "Statement": []})
    role = iam.roles[name]
    assert arn == role["Arn"] and role["Tags"] == OURS
    trust = json.loads(role["AssumeRolePolicyDocument"])
    assert trust["Statement"][0]["Principal"] == {"Service": "eks.amazonaws.com"}
    assert iam.attached[name] == [EKS_POLICY] and list(iam.inline[name]) == ["podplane"]


async def test_an_existing_role_is_found_and_only_missing_policies_attached() -> None:
    iam = FakeIam()
    await ensure_role(iam, "alpha", "r", "eks.amazonaws.com", (EKS_POLICY,))
    iam.calls.clear()
    await ensure_role(iam, "alpha", "r", "eks.amazonaws.com", (EKS_POLICY, "arn:p2"))
    assert iam.calls == [("attach_role_policy", {"role": "r", "arn": "arn:p2"})]


async def test_delete_takes_only_tagged_roles_under_new_and_old_names() -> None:
    iam = FakeIam()
    new = role_names("alpha", "us-west-2")["hyperpod"]
    old = legacy_role_names("alpha")["eks"]
    for name in (new, old):
        await ensure_role(iam, "alpha", name, "sagemaker.amazonaws.com", (EKS_POLICY,),
                          inline={})
    await iam.create_role(legacy_role_names("alpha")["s3csi"], "{}", [])  # not ours
    gone = await delete_identity(iam, "alpha", "us-west-2")
    assert sorted(gone) == sorted([new, old])
    assert list(iam.roles) == [legacy_role_names("alpha")["s3csi"]]


async def test_delete_takes_only_our_oidc_providers() -> None:
    iam = FakeIam()
    iam.providers = {"arn:oidc/ours": {"Tags": OURS}, "arn:oidc/theirs": {"Tags": OURS[:1]}}
    assert await delete_identity(iam, "alpha", None) == ["arn:oidc/ours"]
    assert list(iam.providers) == ["arn:oidc/theirs"]


async def test_the_bucket_is_created_and_tagged_once() -> None:
    s3 = FakeS3()
    await ensure_bucket(s3, "alpha", "podplane-b", "us-west-2")
    await ensure_bucket(s3, "alpha", "podplane-b", "us-west-2")
    assert s3.changed() == ["create_bucket", "put_bucket_tagging"]
    assert s3.tags["podplane-b"] == OURS


@pytest.mark.parametrize("tags", [[], OURS[:1], [{"Key": "podplane:cluster", "Value": "beta"},
                                                  {"Key": "podplane:managed", "Value": "true"}]])
async def test_a_bucket_podplane_did_not_tag_for_the_cluster_is_not_adopted(
        tags: list[dict[str, str]]) -> None:
    s3 = FakeS3()
    s3.buckets["podplane-b"], s3.tags["podplane-b"] = {}, tags
    with pytest.raises(Conflict, match="not adopted"):
        await ensure_bucket(s3, "alpha", "podplane-b", "us-west-2")
    assert s3.changed() == []


async def test_the_lifecycle_script_is_uploaded_only_when_it_differs() -> None:
    s3 = FakeS3()
    s3.buckets["b"] = {"podplane/lifecycle/on_create.sh": b"#!/bin/bash\necho old\n"}
    assert await ensure_lifecycle_script(s3, "b") == "s3://b/podplane/lifecycle/"
    assert s3.buckets["b"]["podplane/lifecycle/on_create.sh"] == lifecycle_script()
    s3.calls.clear()
    await ensure_lifecycle_script(s3, "b")
    assert s3.calls == []
