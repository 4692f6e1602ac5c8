"""Name rules of the APIs names reach (each rule cites its API below), checked before any call."""

from __future__ import annotations

import hashlib
import re

from podplane.domain.errors import InvalidInput

# EKS: 1-100 chars, starts alphanumeric, then letters, digits, '-' or '_'.
EKS_CLUSTER = re.compile(r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$")
# SageMaker HyperPod cluster and instance group names: alnum groups joined by single hyphens, <=63.
HYPERPOD = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
# Kubernetes DNS-1123 label: lowercase alnum and '-', <=63, alnum at both ends.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def check_cluster_name(name: str) -> None:
    """Our cluster name is used for EKS, HyperPod and Kubernetes labels: satisfy all three."""
    if not (EKS_CLUSTER.match(name) and HYPERPOD.match(name) and DNS_LABEL.match(name)):
        raise InvalidInput(
            f"Cluster name {name!r} is not valid.",
            hint="Use 1-63 lowercase letters, digits and '-', starting and ending with a "
            "letter or digit (it names the EKS cluster, the HyperPod cluster and labels).",
            field="name",
        )


def check_group_name(name: str) -> None:
    if not (HYPERPOD.match(name) and DNS_LABEL.match(name)):
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
