"""The sandbox's IAM policy evaluator: explicit Deny wins, wildcards, conditions, and what it
does not model refused the strict way."""

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
    not_action = {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}
    assert not allows([doc(unknown_condition)], "s3:GetObject", OBJECT, CTX)
    assert not allows([doc(not_action)], "s3:GetObject", OBJECT, CTX)
    deny_unknown = {"Effect": "Deny", "NotResource": "arn:aws:s3:::other/*", "Action": "s3:*"}
    assert not allows([doc(allow("*", "*"), deny_unknown)], "s3:GetObject", OBJECT, CTX)
