"""Name rules of the APIs names reach (each rule cites its API below), checked before any call."""

from __future__ import annotations

import hashlib
import re

from podplane.domain.errors import InvalidInput

# The patterns are strings too: request models, path parameters and MCP input schemas use
# these very strings, so a rule is written once (JSON Schema `pattern` is an ECMA regex; these
# are the common subset of both dialects).
# EKS: 1-100 chars, starts alphanumeric, then letters, digits, '-' or '_'.
EKS_CLUSTER_PATTERN = r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$"
# SageMaker HyperPod cluster and instance group names: alnum groups joined by single hyphens, <=63.
HYPERPOD_PATTERN = r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"
# Kubernetes DNS-1123 label: lowercase alnum and '-', <=63, alnum at both ends. Our cluster and
# instance-group names are DNS labels (they become Kubernetes labels).
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_LABEL_MAX = 63
# SageMaker instance types (ml.<family>.<size>); the catalogue decides which ones exist.
INSTANCE_TYPE_PATTERN = r"^ml\.[a-z0-9.\-]+$"
INSTANCE_TYPE_MAX = 40
REGION_PATTERN = r"^[a-z]{2}-[a-z]+-[0-9]$"
AVAILABILITY_ZONE_PATTERN = r"^[a-z]{2}-[a-z]+-[0-9][a-z]$"
# A SageMaker training plan ARN (arn:<partition>:sagemaker:<region>:<account>:training-plan/<name>).
TRAINING_PLAN_ARN_PATTERN = r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:[0-9]{12}:training-plan/.+$"
TRAINING_PLAN_ARN_MAX = 256
SUBNET_ID_PATTERN = r"^subnet-[0-9a-f]{8,17}$"
# A HyperPod node: its instance id, or the Kubernetes Node name HyperPod gives it.
NODE_PATTERN = r"^(hyperpod-)?i-[0-9a-f]{8,17}$"
# API token names: lowercase alnum first, then alnum, '.', '_' or '-', <=63.
TOKEN_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,62}$"
# Our own references in paths (operation ids, step names): no separators, no dots first.
REF_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
# Free text we store and filter on: no control characters (PostgreSQL rejects NUL in text).
PLAIN_TEXT_PATTERN = r"^[^\x00-\x1f\x7f]*$"

EKS_CLUSTER = re.compile(EKS_CLUSTER_PATTERN)
HYPERPOD = re.compile(HYPERPOD_PATTERN)
DNS_LABEL = re.compile(DNS_LABEL_PATTERN)


def check_cluster_name(name: str) -> None:
    """Our cluster name is used for EKS, HyperPod and Kubernetes labels: satisfy all three."""
    # fullmatch: with `match`, `$` would also accept a trailing newline.
    rules = (EKS_CLUSTER, HYPERPOD, DNS_LABEL)
    if not all(rule.fullmatch(name) for rule in rules):
        raise InvalidInput(
            f"Cluster name {name!r} is not valid.",
            hint="Use 1-63 lowercase letters, digits and '-', starting and ending with a "
            "letter or digit (it names the EKS cluster, the HyperPod cluster and labels).",
            field="name",
        )


def check_group_name(name: str) -> None:
    if not (HYPERPOD.fullmatch(name) and DNS_LABEL.fullmatch(name)):
        raise InvalidInput(
            f"Instance group name {name!r} is not valid.",
            hint="Use 1-63 lowercase letters, digits and '-', starting and ending with a "
            "letter or digit.",
            field="name",
        )


def derived_name(base: str, suffix: str, limit: int, *scope: str) -> str:
    """`<base>-<suffix>-<hash>` within `limit` characters: the base is cut to fit, and the
    8-character hash of (base, scope...) keeps two long names (or one name in two regions or
    accounts) from ever colliding, whatever the base's length."""
    digest = hashlib.sha256("/".join((base, *scope)).encode()).hexdigest()[:8]
    tail = f"-{suffix}-{digest}" if suffix else f"-{digest}"
    return base[:limit - len(tail)].rstrip("-") + tail
