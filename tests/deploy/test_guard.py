"""Each security check rejects a copy of the real template with one fault planted in it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.deploy import guard
from tests.deploy.templates import load

Template = dict[str, Any]


def _res(t: Template, name: str) -> Any:
    return t["Resources"][name]["Properties"]


def admin_policy_on_the_role(t: Template) -> None:
    t["Resources"]["ControlPlaneRole"]["Properties"]["ManagedPolicyArns"].append(
        "arn:aws:iam::aws:policy/AdministratorAccess")


def star_action(t: Template) -> None:
    _res(t, "ControlPlanePolicy")["PolicyDocument"]["Statement"][0]["Action"] = "*"


def star_star_action(t: Template) -> None:
    stmts = _res(t, "InstanceHostPolicy")["PolicyDocument"]["Statement"]
    stmts.append({"Effect": "Allow", "Action": ["*:*"], "Resource": "*"})


def service_wide_action(t: Template) -> None:
    _res(t, "ControlPlanePolicy")["PolicyDocument"]["Statement"][0]["Action"].append("iam:*")


def not_action(t: Template) -> None:
    _res(t, "InstanceHostPolicy")["PolicyDocument"]["Statement"].append(
        {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})


def open_ipv4_ingress(t: Template) -> None:
    t["Resources"]["Bastion"] = {"Type": "AWS::EC2::SecurityGroup", "Properties": {
        "GroupDescription": "ssh", "SecurityGroupIngress": [
            {"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "CidrIp": "0.0.0.0/0"}]}}


def open_ipv6_ingress(t: Template) -> None:
    t["Resources"]["Open"] = {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
        "GroupId": "sg-0123456789abcdef0", "IpProtocol": "tcp", "FromPort": 443,
        "ToPort": 443, "CidrIpv6": "::/0"}}


def inbound_to_the_instances_from_the_vpc(t: Template) -> None:
    t["Resources"]["ConsoleIngress"] = {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
        "GroupId": {"Ref": "InstanceSecurityGroup"}, "IpProtocol": "tcp", "FromPort": 3099,
        "ToPort": 3099, "CidrIp": "10.80.0.0/16"}}


def unencrypted_bucket(t: Template) -> None:
    del t["Resources"]["SharedBucket"]["Properties"]["BucketEncryption"]


def public_bucket(t: Template) -> None:
    _res(t, "SharedBucket")["PublicAccessBlockConfiguration"]["RestrictPublicBuckets"] = False


def bucket_with_acls(t: Template) -> None:
    _res(t, "SharedBucket")["OwnershipControls"]["Rules"] = [
        {"ObjectOwnership": "ObjectWriter"}]


def unencrypted_database(t: Template) -> None:
    _res(t, "Database")["StorageEncrypted"] = False


def public_database(t: Template) -> None:
    _res(t, "Database")["PubliclyAccessible"] = True


def unencrypted_volume(t: Template) -> None:
    del t["Resources"]["DataVolume"]["Properties"]["Encrypted"]


def role_without_boundary(t: Template) -> None:
    del t["Resources"]["InstanceRole"]["Properties"]["PermissionsBoundary"]


def no_boundary_parameter(t: Template) -> None:
    del t["Parameters"]["PermissionsBoundaryArn"]


PLANTED: list[tuple[Callable[[Template], None], Callable[[Template], list[str]], str]] = [
    (admin_policy_on_the_role, guard.no_administrator_access, "ControlPlaneRole"),
    (star_action, guard.no_wildcard_actions, "allows '*'"),
    (star_star_action, guard.no_wildcard_actions, "allows '*:*'"),
    (service_wide_action, guard.no_wildcard_actions, "allows 'iam:*'"),
    (not_action, guard.no_wildcard_actions, "NotAction"),
    (open_ipv4_ingress, guard.no_open_ingress, "Bastion: ingress from 0.0.0.0/0"),
    (open_ipv6_ingress, guard.no_open_ingress, "Open: ingress from ::/0"),
    (inbound_to_the_instances_from_the_vpc, guard.no_inbound_to_instances, "ConsoleIngress"),
    (unencrypted_bucket, guard.encrypted_private_buckets, "no default encryption"),
    (public_bucket, guard.encrypted_private_buckets, "public access"),
    (bucket_with_acls, guard.encrypted_private_buckets, "BucketOwnerEnforced"),
    (unencrypted_database, guard.encrypted_private_storage, "database storage"),
    (public_database, guard.encrypted_private_storage, "publicly accessible"),
    (unencrypted_volume, guard.encrypted_private_storage, "DataVolume"),
    (role_without_boundary, guard.roles_take_a_boundary, "InstanceRole"),
    (no_boundary_parameter, guard.roles_take_a_boundary, "PermissionsBoundaryArn"),
]


@pytest.mark.parametrize(("plant", "check", "says"), PLANTED, ids=[p[0].__name__ for p in PLANTED])
def test_each_check_rejects_its_planted_fault(
        plant: Callable[[Template], None], check: Callable[[Template], list[str]],
        says: str) -> None:
    template = load()
    assert check(template) == []  # the real template passes this very check
    plant(template)
    found = check(template)
    assert any(says in v for v in found), found
    assert any(says in v for v in guard.violations(template))


def test_the_open_rule_of_the_old_system_is_caught_on_the_instances_too() -> None:
    """0.0.0.0/0 on the instances' own group: both the open-ingress and no-inbound checks."""
    template = load()
    _res(template, "InstanceSecurityGroup")["SecurityGroupIngress"] = [
        {"IpProtocol": "tcp", "FromPort": 3099, "ToPort": 3099, "CidrIp": "0.0.0.0/0"}]
    found = guard.violations(template)
    assert "InstanceSecurityGroup: ingress from 0.0.0.0/0" in found
    assert ("InstanceSecurityGroup: an inbound rule on InstanceSecurityGroup, an instance's "
            "group") in found


def test_an_attached_policy_with_not_action_is_still_caught() -> None:
    """The boundary exemption covers a boundary only: attach it to a role and it is a grant."""
    t = load()
    _res(t, "ControlPlaneRole")["ManagedPolicyArns"].append({"Ref": "RoleBoundary"})
    assert "RoleBoundary: Allow with NotAction" in guard.violations(t)
