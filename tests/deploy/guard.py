"""Security checks a reviewer would make on a CloudFormation template, as code.

Each check takes a template decoded by cfn-lint (intrinsic functions in their long form,
{"Ref": ...}, {"Fn::If": [...]}) and returns its violations as sentences; `violations` runs
them all. tests/deploy/test_guard.py runs them on deploy/cloudformation/*.yaml and shows each
one rejecting a planted fault.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

Template = dict[str, Any]
OPEN_CIDRS = {"0.0.0.0/0", "::/0"}
ADMIN_ACTIONS = {"*", "*:*"}


def _resources(template: Template, kind: str | None = None) -> Iterator[tuple[str, Any]]:
    for name, res in (template.get("Resources") or {}).items():
        if kind is None or res.get("Type") == kind:
            yield name, res


def _props(res: Any) -> dict[str, Any]:
    return dict(res.get("Properties") or {})


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _walk(node: Any) -> Iterator[Any]:
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _branches(node: Any) -> Iterator[Any]:
    """A value and, for Fn::If, each of its branches (either may be deployed)."""
    if isinstance(node, dict) and set(node) == {"Fn::If"}:
        for branch in node["Fn::If"][1:]:
            yield from _branches(branch)
    else:
        yield node


def no_administrator_access(template: Template) -> list[str]:
    return [f"{name}: refers to AdministratorAccess" for name, res in _resources(template)
            if any(isinstance(v, str) and "AdministratorAccess" in v for v in _walk(res))]


def _statements(template: Template) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, res in _resources(template):
        for node in _walk(_props(res)):
            if isinstance(node, dict) and "Statement" in node:
                for stmt in _as_list(node["Statement"]):
                    for one in _branches(stmt):
                        if isinstance(one, dict) and "Effect" in one:
                            yield name, one


def _boundaries(template: Template) -> set[str]:
    """Managed policies no role, user or group of the template attaches: the permissions
    boundary podplane gives its roles (a boundary grants nothing, it caps)."""
    attached = {json.dumps(v) for _, res in _resources(template)
                for v in _as_list(_props(res).get("ManagedPolicyArns", []))}
    return {name for name, _ in _resources(template, "AWS::IAM::ManagedPolicy")
            if json.dumps({"Ref": name}) not in attached
            and "boundary" in str(_props(template["Resources"][name]).get("Description", ""))}


def no_wildcard_actions(template: Template) -> list[str]:
    """An Allow of every action ("*", "*:*", "service:*") or of all but some (NotAction),
    except in a permissions boundary nothing attaches."""
    out = []
    boundaries = _boundaries(template)
    for name, stmt in _statements(template):
        if stmt.get("Effect") != "Allow" or name in boundaries:
            continue
        if "NotAction" in stmt:
            out.append(f"{name}: Allow with NotAction")
        for action in _as_list(stmt.get("Action", [])):
            if isinstance(action, str) and (action in ADMIN_ACTIONS or action.endswith(":*")):
                out.append(f"{name}: allows {action!r}")
    return out


def _ingress_rules(template: Template) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """(resource, the group it opens, rule) for inline and standalone ingress rules."""
    for name, res in _resources(template, "AWS::EC2::SecurityGroup"):
        for rule in _as_list(_props(res).get("SecurityGroupIngress") or []):
            for one in _branches(rule):
                yield name, {"Ref": name}, one
    for name, res in _resources(template, "AWS::EC2::SecurityGroupIngress"):
        props = _props(res)
        yield name, props.get("GroupId", props.get("GroupName")), props


def no_open_ingress(template: Template) -> list[str]:
    return [f"{name}: ingress from {rule.get('CidrIp') or rule.get('CidrIpv6')}"
            for name, _, rule in _ingress_rules(template)
            if isinstance(rule, dict)
            and (rule.get("CidrIp") in OPEN_CIDRS or rule.get("CidrIpv6") in OPEN_CIDRS)]


def _instance_groups(template: Template) -> set[str]:
    """Security groups (logical ids) the template puts on EC2 instances."""
    groups: set[str] = set()
    for _, res in _resources(template):
        if res.get("Type") not in ("AWS::EC2::Instance", "AWS::EC2::LaunchTemplate"):
            continue
        props = _props(res)
        data = props.get("LaunchTemplateData", props)
        for ref in _as_list(data.get("SecurityGroupIds") or []):
            if isinstance(ref, dict) and "Ref" in ref:
                groups.add(ref["Ref"])
    return groups


def no_inbound_to_instances(template: Template) -> list[str]:
    """The control plane is reached through SSM only: its groups have no inbound rule at all."""
    groups = _instance_groups(template)
    out = [] if groups else ["no security group is attached to the instances"]
    for name, target, _ in _ingress_rules(template):
        if isinstance(target, dict) and target.get("Ref") in groups:
            out.append(f"{name}: an inbound rule on {target['Ref']}, an instance's group")
    return out


def encrypted_private_buckets(template: Template) -> list[str]:
    out = []
    for name, res in _resources(template, "AWS::S3::Bucket"):
        props = _props(res)
        rules = (props.get("BucketEncryption") or {}).get("ServerSideEncryptionConfiguration")
        algorithms = [(r.get("ServerSideEncryptionByDefault") or {}).get("SSEAlgorithm")
                      for r in _as_list(rules or [])]
        if not algorithms or not all(algorithms):
            out.append(f"{name}: no default encryption")
        block = props.get("PublicAccessBlockConfiguration") or {}
        flags = ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls",
                 "RestrictPublicBuckets")
        if not all(block.get(flag) is True for flag in flags):
            out.append(f"{name}: public access is not blocked entirely")
        owners = [r.get("ObjectOwnership") for r in
                  _as_list((props.get("OwnershipControls") or {}).get("Rules") or [])]
        if owners != ["BucketOwnerEnforced"]:
            out.append(f"{name}: object ownership is not BucketOwnerEnforced")
    return out


def encrypted_private_storage(template: Template) -> list[str]:
    out = []
    for name, res in _resources(template):
        props = _props(res)
        kind = res.get("Type")
        if kind == "AWS::EC2::Volume" and props.get("Encrypted") is not True:
            out.append(f"{name}: EBS volume not encrypted")
        if kind == "AWS::RDS::DBInstance":
            if props.get("StorageEncrypted") is not True:
                out.append(f"{name}: database storage not encrypted")
            if props.get("PubliclyAccessible") is not False:
                out.append(f"{name}: database publicly accessible")
        if kind == "AWS::EC2::LaunchTemplate":
            for device in props.get("LaunchTemplateData", {}).get("BlockDeviceMappings", []):
                if (device.get("Ebs") or {}).get("Encrypted") is not True:
                    out.append(f"{name}: {device.get('DeviceName')} not encrypted")
    return out


def roles_take_a_boundary(template: Template) -> list[str]:
    """Every role takes the PermissionsBoundaryArn parameter as its boundary when it is set."""
    if "PermissionsBoundaryArn" not in (template.get("Parameters") or {}):
        return ["no PermissionsBoundaryArn parameter"]
    out = []
    for name, res in _resources(template, "AWS::IAM::Role"):
        boundary = _props(res).get("PermissionsBoundary")
        if not any(b == {"Ref": "PermissionsBoundaryArn"} for b in _branches(boundary)):
            out.append(f"{name}: no permissions boundary option")
    return out


CHECKS: list[Callable[[Template], list[str]]] = [
    no_administrator_access, no_wildcard_actions, no_open_ingress, no_inbound_to_instances,
    encrypted_private_buckets, encrypted_private_storage, roles_take_a_boundary]


def violations(template: Template) -> list[str]:
    return [v for check in CHECKS for v in check(template)]
