"""IAM and S3 prerequisites the sandbox enforces (docs/sandbox.md, "IAM and identity"): a role
trusting the services the tests hand it to, allowed to read the lifecycle scripts."""

from __future__ import annotations

import json
from typing import Any

from podplane_sandbox.aws.iam_rules import LAG_SECONDS

ACCOUNT = "123456789012"
SERVICES = ("eks.amazonaws.com", "sagemaker.amazonaws.com", "pods.eks.amazonaws.com")
SCRIPTS_BUCKET, SCRIPTS_PREFIX = "sagemaker-lc", "scripts/"


def trust(*services: str) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": list(services)},
        "Action": ["sts:AssumeRole", "sts:TagSession"]}]})


def read_scripts(bucket: str) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}"},
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}


def make_role(client: Any, name: str, services: tuple[str, ...] = SERVICES,
              inline: dict[str, Any] | None = None) -> str:
    arn = str(client("iam").create_role(RoleName=name,
                                        AssumeRolePolicyDocument=trust(*services))["Role"]["Arn"])
    if inline is not None:
        client("iam").put_role_policy(RoleName=name, PolicyName="scripts",
                                      PolicyDocument=json.dumps(inline))
    return arn


def put_scripts(client: Any, bucket: str = SCRIPTS_BUCKET,
                key: str = SCRIPTS_PREFIX + "on_create.sh") -> None:
    s3 = client("s3")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket=bucket, Key=key, Body=b"#!/bin/bash\n")


def prepare(client: Any, advance: Any, role_name: str) -> None:
    """The shared test role and scripts, then enough virtual time for IAM to propagate
    (once: a restarted sandbox keeps them)."""
    if any(r["RoleName"] == role_name for r in client("iam").list_roles()["Roles"]):
        return
    make_role(client, role_name, inline=read_scripts(SCRIPTS_BUCKET))
    put_scripts(client)
    advance(LAG_SECONDS + 1)
