"""IAM SimulatePrincipalPolicy in the sandbox, through boto3 (botocore parses the answer):
decisions as the IAM policy evaluation logic defines them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import Box

ACCOUNT = "123456789012"


def user_with(box: Box, name: str, *statements: dict[str, Any]) -> str:
    iam = box.client("iam")
    arn = iam.create_user(UserName=name)["User"]["Arn"]
    iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": list(statements)}))
    return str(arn)


def decide(box: Box, arn: str, actions: list[str], resources: list[str] | None = None,
           **context: str) -> dict[str, str]:
    params: dict[str, Any] = {"PolicySourceArn": arn, "ActionNames": actions}
    if resources:
        params["ResourceArns"] = resources
    if context:
        params["ContextEntries"] = [{"ContextKeyName": k.replace("__", ":"),
                                     "ContextKeyValues": [v], "ContextKeyType": "string"}
                                    for k, v in context.items()]
    out = box.client("iam").simulate_principal_policy(**params)["EvaluationResults"]
    return {f"{r['EvalActionName']}@{r['EvalResourceName']}": r["EvalDecision"] for r in out}


def test_allow_implicit_and_explicit_deny(box: Box) -> None:
    arn = user_with(box, "u1", {"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"},
                    {"Effect": "Deny", "Action": "ec2:DescribeVpcs", "Resource": "*"})
    assert decide(box, arn, ["ec2:DescribeSubnets", "ec2:DescribeVpcs", "ec2:CreateVpc"]) == {
        "ec2:DescribeSubnets@*": "allowed", "ec2:DescribeVpcs@*": "explicitDeny",
        "ec2:CreateVpc@*": "implicitDeny"}


def test_resources_match_by_pattern_and_star_only_matches_star(box: Box) -> None:
    arn = user_with(box, "u2", {"Effect": "Allow", "Action": "iam:GetRole",
                                "Resource": f"arn:aws:iam::{ACCOUNT}:role/podplane-*"})
    assert decide(box, arn, ["iam:GetRole"], [f"arn:aws:iam::{ACCOUNT}:role/podplane-x",
                                              f"arn:aws:iam::{ACCOUNT}:role/other", "*"]) == {
        f"iam:GetRole@arn:aws:iam::{ACCOUNT}:role/podplane-x": "allowed",
        f"iam:GetRole@arn:aws:iam::{ACCOUNT}:role/other": "implicitDeny",
        "iam:GetRole@*": "implicitDeny"}


def test_conditions_need_the_context_key(box: Box) -> None:
    arn = user_with(box, "u3", {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*",
                                "Condition": {"StringEquals": {
                                    "iam:PassedToService": "eks.amazonaws.com"}}})
    iam = box.client("iam")
    missing = iam.simulate_principal_policy(PolicySourceArn=arn, ActionNames=["iam:PassRole"])
    (result,) = missing["EvaluationResults"]
    assert result["EvalDecision"] == "implicitDeny"
    assert result["MissingContextValues"] == ["iam:PassedToService"]
    assert decide(box, arn, ["iam:PassRole"], iam__PassedToService="eks.amazonaws.com") == {
        "iam:PassRole@*": "allowed"}
    assert decide(box, arn, ["iam:PassRole"], iam__PassedToService="ec2.amazonaws.com") == {
        "iam:PassRole@*": "implicitDeny"}


def test_a_condition_it_cannot_evaluate_never_allows_and_always_denies(box: Box) -> None:
    odd = {"NumericLessThan": {"aws:MultiFactorAuthAge": "3600"}}
    arn = user_with(box, "u5",
                    {"Effect": "Allow", "Action": "eks:*", "Resource": "*"},
                    {"Effect": "Allow", "Action": "ec2:DescribeVpcs", "Resource": "*",
                     "Condition": odd},
                    {"Effect": "Deny", "Action": "eks:DeleteCluster", "Resource": "*",
                     "Condition": odd})
    assert decide(box, arn, ["ec2:DescribeVpcs", "eks:DeleteCluster", "eks:ListClusters"]) == {
        "ec2:DescribeVpcs@*": "implicitDeny", "eks:DeleteCluster@*": "explicitDeny",
        "eks:ListClusters@*": "allowed"}


def test_managed_and_group_policies_count(box: Box) -> None:
    iam = box.client("iam")
    arn = iam.create_user(UserName="u4")["User"]["Arn"]
    iam.create_group(GroupName="g")
    iam.add_user_to_group(GroupName="g", UserName="u4")
    policy = iam.create_policy(PolicyName="eks-read", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "eks:ListClusters", "Resource": "*"}]}))
    iam.attach_group_policy(GroupName="g", PolicyArn=policy["Policy"]["Arn"])
    assert decide(box, arn, ["eks:ListClusters"]) == {"eks:ListClusters@*": "allowed"}


def test_roles_are_simulated_and_unknown_principals_are_not_found(box: Box) -> None:
    iam = box.client("iam")
    iam.create_role(RoleName="r1", AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                "Principal": {"Service": "eks.amazonaws.com"}}]}))
    iam.attach_role_policy(RoleName="r1",
                           PolicyArn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy")
    role = f"arn:aws:iam::{ACCOUNT}:role/r1"
    assert decide(box, role, ["ec2:DescribeVpcs", "sagemaker:CreateCluster"]) == {
        "ec2:DescribeVpcs@*": "allowed", "sagemaker:CreateCluster@*": "implicitDeny"}
    with pytest.raises(ClientError) as err:
        decide(box, f"arn:aws:iam::{ACCOUNT}:user/nobody", ["ec2:DescribeVpcs"])
    assert err.value.response["Error"]["Code"] == "NoSuchEntity"


def test_not_action_and_policy_variables_as_iam_defines_them(box: Box) -> None:
    """One evaluator with the EKS/HyperPod rules: NotAction matches every other action; a
    policy variable takes the context entry's value (IAM User Guide, "IAM policy elements:
    Variables and tags")."""
    arn = user_with(box, "u6", {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
                    {"Effect": "Allow", "Action": "iam:GetUser",
                     "Resource": f"arn:aws:iam::{ACCOUNT}:user/${{aws:username}}"})
    assert decide(box, arn, ["s3:ListAllMyBuckets", "iam:CreateUser"]) == {
        "s3:ListAllMyBuckets@*": "allowed", "iam:CreateUser@*": "implicitDeny"}
    me, other = f"arn:aws:iam::{ACCOUNT}:user/u6", f"arn:aws:iam::{ACCOUNT}:user/u7"
    assert decide(box, arn, ["iam:GetUser"], [me, other], aws__username="u6") == {
        f"iam:GetUser@{me}": "allowed", f"iam:GetUser@{other}": "implicitDeny"}
