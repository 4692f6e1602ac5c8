"""Every role podplane creates carries the permissions boundary the policy demands (issue 34,
S7): the adapter sends PODPLANE_ROLE_PERMISSIONS_BOUNDARY on CreateRole, the policy lets
CreateRole, PutRolePolicy and AttachRolePolicy through only with that boundary (and attaches
only the managed policies podplane uses), and the stack hands the container the boundary it
makes under the name the policy expects."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from podplane.cloud.aws.iam import IamAdapter
from podplane.cloud.wiring import build_cloud
from podplane.domain.aws_policy import ATTACHED, POLICY
from podplane.settings import Settings
from tests.deploy.templates import MAIN

BOUNDARY = "arn:aws:iam::111122223333:policy/podplane-boundary-prod"


class Caller:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def call(self, service: str, op: str, **kw: Any) -> dict[str, Any]:
        self.calls.append((service, op, kw))
        return {"Role": {"Arn": "arn:aws:iam::111122223333:role/" + kw["RoleName"]}}


async def test_create_role_sends_the_boundary_only_when_one_is_set() -> None:
    bounded, plain = Caller(), Caller()
    await IamAdapter(bounded, BOUNDARY).create_role("podplane-x", "{}", [])  # type: ignore[arg-type]
    await IamAdapter(plain).create_role("podplane-x", "{}", [])  # type: ignore[arg-type]
    assert bounded.calls[0][2]["PermissionsBoundary"] == BOUNDARY
    assert "PermissionsBoundary" not in plain.calls[0][2]


def test_settings_reach_the_adapter(tmp_path: Any) -> None:
    aws, _ = build_cloud(Settings(home=tmp_path, region="us-west-2",
                                  role_permissions_boundary=BOUNDARY))
    assert aws.iam.boundary == BOUNDARY  # type: ignore[attr-defined]


def test_the_policy_grants_roles_only_inside_the_boundary() -> None:
    (grant,) = [s for s in POLICY["Statement"] if "iam:CreateRole" in s["Action"]]
    assert sorted(grant["Action"]) == ["iam:AttachRolePolicy", "iam:CreateRole",
                                       "iam:PutRolePolicy"]
    pattern = grant["Condition"]["ArnLike"]["iam:PermissionsBoundary"]
    assert fnmatchcase(BOUNDARY.replace("111122223333", "*"), pattern)
    assert not fnmatchcase("arn:aws:iam::*:policy/AdministratorAccess", pattern)
    assert grant["Condition"]["ArnLikeIfExists"]["iam:PolicyARN"] == list(ATTACHED)
    granting = {a for s in POLICY["Statement"] for a in s["Action"]
                if a in ("iam:CreateRole", "iam:PutRolePolicy", "iam:AttachRolePolicy",
                         "iam:PutRolePermissionsBoundary", "iam:DeleteRolePermissionsBoundary")}
    assert granting == {"iam:CreateRole", "iam:PutRolePolicy", "iam:AttachRolePolicy"}
    (tags,) = [s for s in POLICY["Statement"] if "ec2:CreateTags" in s["Action"]]
    assert tags["Condition"] == {"Null": {"ec2:CreateAction": "false"}}


def test_the_stack_makes_the_boundary_and_hands_it_to_the_container() -> None:
    text = MAIN.read_text()
    assert "ManagedPolicyName: !Sub podplane-boundary-${AWS::StackName}" in text
    assert "ROLE_BOUNDARY=${RoleBoundary}" in text
    assert '-e PODPLANE_ROLE_PERMISSIONS_BOUNDARY="$ROLE_BOUNDARY"' in text
