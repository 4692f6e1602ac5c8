"""Each condition of podplane's own IAM policy (domain/aws_policy.py, the policy the
CloudFormation stack and docs/aws-permissions.md carry) proved with the sandbox's IAM policy
evaluator, the one behind its SimulatePrincipalPolicy: the request the condition is there for
is allowed, and the one it is there to stop is denied (issue 34, S7). A statement given a
condition without a case here fails `test_every_condition_has_its_cases`."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from podplane.domain.aws_policy import AMP_OWN, ATTACHED, BOUNDARY_NAME, FSX_OWN, POLICY
from podplane_sandbox.aws.iam_policy import evaluate

ACCOUNT = "111122223333"
VPC = f"arn:aws:ec2:us-west-2:{ACCOUNT}:vpc/vpc-0123456789abcdef0"
FSX = f"arn:aws:fsx:us-west-2:{ACCOUNT}:file-system/fs-0123456789abcdef0"
AMP = f"arn:aws:aps:us-west-2:{ACCOUNT}:workspace/ws-0123"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/podplane-alpha-nodes"
BOUNDARY = f"arn:aws:iam::{ACCOUNT}:policy/{BOUNDARY_NAME}-prod"
EKS_SLR = (f"arn:aws:iam::{ACCOUNT}:role/aws-service-role/eks.amazonaws.com/"
           "AWSServiceRoleForAmazonEKS")


@dataclass(frozen=True)
class Case:
    statement: str  # the Sid whose condition decides it
    action: str
    resource: str
    context: dict[str, str]
    allowed: bool
    why: str


CASES = [
    # EC2 User Guide, "Grant permission to tag resources during creation"
    Case("TagOnCreate", "ec2:CreateTags", VPC, {"ec2:CreateAction": "CreateVpc"}, True,
         "tags given as the VPC is made"),
    Case("TagOnCreate", "ec2:CreateTags", VPC, {}, False,
         "a tag added later could forge podplane:managed on any VPC"),
    Case("DeleteOwnNetwork", "ec2:DeleteVpc", VPC,
         {"aws:ResourceTag/podplane:managed": "true"}, True, "a VPC podplane made"),
    Case("DeleteOwnNetwork", "ec2:DeleteVpc", VPC, {}, False, "anyone else's VPC"),
    Case("DeleteOwnNetwork", "ec2:DeleteVpc", VPC,
         {"aws:ResourceTag/podplane:managed": "false"}, False, "a tag with another value"),
    Case("FeatureStorageCreateOwn", "fsx:CreateFileSystem", FSX,
         {"aws:RequestTag/podplane:feature": FSX_OWN["podplane:feature"]}, True,
         "the fsx-lustre feature's file system, tagged as it is made"),
    Case("FeatureStorageCreateOwn", "fsx:CreateFileSystem", FSX, {}, False,
         "an untagged file system"),
    Case("FeatureStorageCreateOwn", "aps:CreateWorkspace", AMP,
         {"aws:RequestTag/podplane:feature": AMP_OWN["podplane:feature"]}, True,
         "the observability feature's workspace"),
    Case("FeatureStorageChangeOwn", "fsx:DeleteFileSystem", FSX,
         {"aws:ResourceTag/podplane:feature": FSX_OWN["podplane:feature"]}, True,
         "the feature's own file system"),
    Case("FeatureStorageChangeOwn", "fsx:DeleteFileSystem", FSX,
         {"aws:ResourceTag/podplane:feature": "team-data"}, False,
         "a file system given by id (the user's data)"),
    Case("FeatureStorageChangeOwn", "aps:DeleteWorkspace", AMP, {}, False,
         "an existing workspace given by id"),
    # IAM User Guide, "Permissions boundaries for IAM entities"
    Case("Bounded", "iam:CreateRole", ROLE, {"iam:PermissionsBoundary": BOUNDARY}, True,
         "a role inside podplane's boundary"),
    Case("Bounded", "iam:CreateRole", ROLE, {}, False, "a role without the boundary"),
    Case("Bounded", "iam:CreateRole", ROLE,
         {"iam:PermissionsBoundary": f"arn:aws:iam::{ACCOUNT}:policy/wide-open"}, False,
         "a role with a boundary of the caller's choosing"),
    Case("Bounded", "iam:AttachRolePolicy", ROLE,
         {"iam:PermissionsBoundary": BOUNDARY, "iam:PolicyARN": ATTACHED[0]}, True,
         "a managed policy podplane attaches"),
    Case("Bounded", "iam:AttachRolePolicy", ROLE,
         {"iam:PermissionsBoundary": BOUNDARY,
          "iam:PolicyARN": "arn:aws:iam::aws:policy/AdministratorAccess"}, False,
         "account admin in two steps (attach, then pass to a pod)"),
    Case("PassOwnRoles", "iam:PassRole", ROLE,
         {"iam:PassedToService": "pods.eks.amazonaws.com"}, True, "to EKS Pod Identity"),
    Case("PassOwnRoles", "iam:PassRole", ROLE,
         {"iam:PassedToService": "ec2.amazonaws.com"}, False, "to an instance profile"),
    Case("ServiceLinkedRoles", "iam:CreateServiceLinkedRole", EKS_SLR,
         {"iam:AWSServiceName": "eks.amazonaws.com"}, True, "EKS's own role"),
    Case("ServiceLinkedRoles", "iam:CreateServiceLinkedRole", EKS_SLR,
         {"iam:AWSServiceName": "ec2.amazonaws.com"}, False, "another service's"),
]


def _decision(case: Case) -> str:
    context = {"aws:PrincipalAccount": ACCOUNT, **case.context}
    return evaluate([POLICY], case.action, case.resource,
                    {k: [v] for k, v in context.items()}, complete=True).decision


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.statement}:{c.why}")
def test_each_condition_allows_what_it_is_for_and_stops_the_rest(case: Case) -> None:
    assert _decision(case) == ("allowed" if case.allowed else "implicitDeny"), case.why


def test_every_condition_has_its_cases() -> None:
    """Both ways for every statement with a condition: a condition added to the policy
    without the requests that prove it fails here."""
    conditioned = {s["Sid"] for s in POLICY["Statement"] if s.get("Condition")}
    proved = {c.statement for c in CASES if c.allowed} & {c.statement for c in CASES
                                                          if not c.allowed}
    assert conditioned == proved, f"without cases both ways: {sorted(conditioned - proved)}"
