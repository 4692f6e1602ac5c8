"""ARN partitions: the same names differ in China and GovCloud (`arn:aws-cn:`, `arn:aws-us-gov:`),
so nothing hard-codes `arn:aws:` (AWS General Reference, "Amazon Resource Names": partition)."""

from __future__ import annotations

PARTITIONS = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"), ("us-isob-", "aws-iso-b"),
              ("us-iso-", "aws-iso"))


def partition(region: str) -> str:
    for prefix, name in PARTITIONS:
        if region.startswith(prefix):
            return name
    return "aws"


def managed_policy(region: str, name: str) -> str:
    """An AWS managed IAM policy in the region's partition."""
    return f"arn:{partition(region)}:iam::aws:policy/{name}"


def s3_arn(region: str, resource: str) -> str:
    return f"arn:{partition(region)}:s3:::{resource}"
