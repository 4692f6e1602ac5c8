"""`podplane doctor` against a sandbox account: what AWS itself would answer (STS identity,
IAM policy simulation, Service Quotas, EKS access entries) turned into findings with fixes."""

from __future__ import annotations

import copy
from typing import Any

from podplane.domain.aws_policy import POLICY
from podplane.domain.doctor import Finding, Status
from podplane.services.diagnostics.doctor import diagnose
from tests.doctor.conftest import Account, without

GPU = "ml.p5.48xlarge"


def by_check(findings: list[Finding]) -> dict[str, Finding]:
    return {f.check: f for f in findings}


async def test_a_healthy_account_is_all_ok(account: Account) -> None:
    account.add_service_linked_role()
    ports = account.identity("podplane-ops")
    found = by_check(await diagnose(ports, GPU, 2, None))
    assert set(found) == {"credentials", "region", "service_linked_role", "permissions",
                          "quota"}
    assert all(f.status is Status.OK for f in found.values()), found
    assert "arn:aws:iam::123456789012:user/podplane-ops" in found["credentials"].detail
    assert "exists" in found["service_linked_role"].detail


async def test_a_quota_of_zero_fails_with_the_increase_to_ask_for(account: Account) -> None:
    account.set_quota(GPU, 0)
    found = by_check(await diagnose(account.identity("podplane-ops"), GPU, 4, None))
    quota = found["quota"]
    assert quota.status is Status.FAIL
    assert "4 asked, 0 free" in quota.detail
    assert f"'{GPU} for cluster usage' to at least 4" in quota.fix


async def test_without_an_applied_value_aws_default_decides(account: Account) -> None:
    """ListServiceQuotas omits quotas never increased; a fresh account's GPU default is 0."""
    account.set_quota(GPU, None)
    quota = by_check(await diagnose(account.identity("podplane-ops"), GPU, 1, None))["quota"]
    assert quota.status is Status.FAIL
    assert "is 0 (AWS default)" in quota.detail and "to at least 1" in quota.fix


async def test_a_missing_service_linked_role_needs_the_right_to_create_it(
        account: Account) -> None:
    allowed = by_check(await diagnose(account.identity("may-create"), None, 1, None))
    assert allowed["service_linked_role"].status is Status.OK  # HyperPod will create it
    assert "does not exist yet" in allowed["service_linked_role"].detail

    ports = account.identity("may-not", without("iam:CreateServiceLinkedRole"))
    slr = by_check(await diagnose(ports, None, 1, None))["service_linked_role"]
    assert slr.status is Status.FAIL
    assert "iam:CreateServiceLinkedRole" in slr.detail
    assert "create-service-linked-role --aws-service-name hyperpod.sagemaker" in slr.fix


async def test_a_principal_lacking_a_permission_is_told_which(account: Account) -> None:
    ports = account.identity("no-entries", without("eks:CreateAccessEntry"))
    perms = by_check(await diagnose(ports, None, 1, None))["permissions"]
    assert perms.status is Status.FAIL
    assert "eks:CreateAccessEntry" in perms.detail
    assert "eks:AssociateAccessPolicy" not in perms.detail  # only what is missing
    assert "docs/aws-permissions.md" in perms.fix


async def test_passrole_must_allow_each_service_it_is_passed_to(account: Account) -> None:
    policy = copy.deepcopy(POLICY)
    pass_role = next(s for s in policy["Statement"] if s["Sid"] == "PassOwnRoles")
    pass_role["Condition"]["StringEquals"]["iam:PassedToService"] = ["eks.amazonaws.com"]
    perms = by_check(await diagnose(account.identity("eks-only", policy), None, 1,
                                    None))["permissions"]
    assert perms.status is Status.FAIL
    assert "iam:PassRole (iam:PassedToService=sagemaker.amazonaws.com)" in perms.detail
    assert "PassedToService=eks.amazonaws.com" not in perms.detail


async def test_an_explicit_deny_wins(account: Account) -> None:
    policy: dict[str, Any] = copy.deepcopy(POLICY)
    policy["Statement"].append({"Effect": "Deny", "Action": "sagemaker:Delete*",
                                "Resource": "*"})
    perms = by_check(await diagnose(account.identity("no-deletes", policy), None, 1,
                                    None))["permissions"]
    assert "sagemaker:DeleteCluster" in perms.detail and perms.status is Status.FAIL


async def test_an_existing_cluster_needs_an_access_entry_for_podplane(
        account: Account) -> None:
    account.eks_cluster("eks1")
    ports = account.identity("operator")
    entry = by_check(await diagnose(ports, None, 1, "eks1"))["access_entry"]
    assert entry.status is Status.FAIL and "401" in entry.detail
    principal = "arn:aws:iam::123456789012:user/operator"
    assert f"create-access-entry --cluster-name eks1 --principal-arn {principal}" in entry.fix

    account.box.client("eks").create_access_entry(clusterName="eks1", principalArn=principal)
    entry = by_check(await diagnose(ports, None, 1, "eks1"))["access_entry"]
    assert entry.status is Status.OK

    missing = by_check(await diagnose(ports, None, 1, "nope"))["access_entry"]
    assert missing.status is Status.FAIL and "No EKS cluster named nope" in missing.detail


async def test_an_identity_iam_does_not_know_cannot_be_simulated(account: Account) -> None:
    """The sandbox's default keys are nobody in IAM: AWS would answer NoSuchEntity."""
    found = by_check(await diagnose(account.ports("test", "test"), None, 1, None))
    assert found["credentials"].status is Status.OK
    assert found["permissions"].status is Status.WARN
    assert "NoSuchEntity" in found["permissions"].detail
