"""The sandbox's one IAM policy evaluator, as the EKS/HyperPod rules use it (a partial context):
explicit Deny wins, wildcards, NotAction/NotResource, conditions, and what it cannot decide
refused the strict way. SimulatePrincipalPolicy's use (a complete context) is in
test_iam_simulate.py."""

from __future__ import annotations

from podplane_sandbox.aws.iam_policy import allows

CTX = {"aws:PrincipalAccount": "123456789012", "aws:ResourceAccount": "123456789012"}
OBJECT = "arn:aws:s3:::podplane-x/scripts/on_create.sh"


def doc(*statements: dict[str, object]) -> dict[str, object]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def allow(action: object, resource: object, **extra: object) -> dict[str, object]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def test_allow_matches_actions_case_insensitively_and_resources_with_wildcards() -> None:
    assert allows([doc(allow("S3:get*", "arn:aws:s3:::podplane-?/*"))], "s3:GetObject",
                  OBJECT, CTX)
    assert not allows([doc(allow("s3:GetObject", "arn:aws:s3:::sagemaker-*"))],
                      "s3:GetObject", OBJECT, CTX)
    assert not allows([], "s3:GetObject", OBJECT, CTX)


def test_an_explicit_deny_wins_over_any_allow() -> None:
    policies = [doc(allow("*", "*")),
                doc({"Effect": "Deny", "Action": "s3:*", "Resource": OBJECT})]
    assert not allows(policies, "s3:GetObject", OBJECT, CTX)


def test_conditions_on_known_keys_are_evaluated_with_policy_variables() -> None:
    same_account = allow("s3:GetObject", "*", Condition={
        "StringEquals": {"aws:ResourceAccount": "${aws:PrincipalAccount}"}})
    other = allow("s3:GetObject", "*", Condition={
        "StringEquals": {"aws:ResourceAccount": "999999999999"}})
    assert allows([doc(same_account)], "s3:GetObject", OBJECT, CTX)
    assert not allows([doc(other)], "s3:GetObject", OBJECT, CTX)


def test_what_is_not_modelled_never_allows_and_always_denies() -> None:
    unknown_condition = allow("s3:GetObject", "*", Condition={
        "IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})
    not_principal = {"Effect": "Allow", "NotPrincipal": {"AWS": "*"}, "Action": "*",
                     "Resource": "*"}
    assert not allows([doc(unknown_condition)], "s3:GetObject", OBJECT, CTX)
    assert not allows([doc(not_principal)], "s3:GetObject", OBJECT, CTX)
    deny_unknown = {"Effect": "Deny", "Action": "s3:*", "Resource": "*",
                    "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}}
    assert not allows([doc(allow("*", "*"), deny_unknown)], "s3:GetObject", OBJECT, CTX)


def test_a_key_the_sandbox_does_not_know_decides_nothing() -> None:
    """Of a real request the sandbox knows only some keys (a VPC endpoint, a source IP are
    unknown): a condition on another key never allows and always denies."""
    on_vpce = {"StringEquals": {"aws:SourceVpce": "vpce-0123"}}
    assert not allows([doc(allow("s3:GetObject", "*", Condition=on_vpce))], "s3:GetObject",
                      OBJECT, CTX)
    deny = {"Effect": "Deny", "Action": "s3:*", "Resource": "*",
            "Condition": {"StringNotEquals": {"aws:SourceVpce": "vpce-0123"}}}
    assert not allows([doc(allow("*", "*"), deny)], "s3:GetObject", OBJECT, CTX)


def test_not_action_and_not_resource_match_everything_else() -> None:
    """IAM User Guide, "IAM JSON policy elements: NotAction / NotResource"."""
    not_action = {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}
    assert allows([doc(not_action)], "s3:GetObject", OBJECT, CTX)
    assert not allows([doc(not_action)], "iam:GetRole", "*", CTX)
    deny_elsewhere = {"Effect": "Deny", "NotResource": "arn:aws:s3:::other/*", "Action": "s3:*"}
    assert not allows([doc(allow("*", "*"), deny_elsewhere)], "s3:GetObject", OBJECT, CTX)
    assert allows([doc(allow("*", "*"), deny_elsewhere)], "s3:GetObject",
                  "arn:aws:s3:::other/key", CTX)


def test_null_decides_by_whether_the_key_is_present() -> None:
    """EC2 tag-on-create (docs/aws-permissions.md TagOnCreate): ec2:CreateAction is present
    only while a resource is created, so Null false allows CreateTags then and never after."""
    on_create = allow("ec2:CreateTags", "*", Condition={"Null": {"ec2:CreateAction": "false"}})
    assert allows([doc(on_create)], "ec2:CreateTags", "*",
                  {**CTX, "ec2:CreateAction": "CreateVpc"})
    assert not allows([doc(on_create)], "ec2:CreateTags", "*", CTX)  # undecided: strict
