"""Finite capacity per AZ per instance type, and SageMaker cluster-usage quotas.

Capacity is what the region can give right now (the insufficient-capacity path); quotas are the
account's limits (the ResourceLimitExceeded path). Both are plain tables a test can change.
"""

from __future__ import annotations

import hashlib
from typing import Any

from podplane_sandbox.aws.hyperpod.instance_facts import accelerated
from podplane_sandbox.aws.protocol import service_model

# per-AZ free capacity for the biggest GPU types is deliberately small and uneven
_BIG = {"ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.p4d.24xlarge",
        "ml.p4de.24xlarge", "ml.trn1.32xlarge", "ml.trn1n.32xlarge"}
_BIG_PER_AZ = {"us-west-2a": 8, "us-west-2b": 16, "us-west-2c": 4, "us-west-2d": 0}


def default_capacity(instance_type: str, az: str) -> int:
    if instance_type in _BIG:
        return _BIG_PER_AZ[az]
    return 64


# A fresh account's default: 0 for accelerated types (a HyperPod cluster of GPU or Trainium
# instances needs a quota increase first: AWS docs, HyperPod prerequisites, "Quotas"); CPU
# types get a small default (the sandbox's choice; AWS publishes no table).
CPU_DEFAULT_QUOTA = 20
# The sandbox account has had a few increases approved, like an account already used for
# HyperPod (the README's and the tests' types). Every other type has only its default, so
# ListServiceQuotas does not return it (botocore: no applied value, no quota listed).
APPROVED = {"ml.g5.8xlarge": 32, "ml.g5.xlarge": 16, "ml.p5.48xlarge": 16}


def default_quota(instance_type: str) -> int:
    return 0 if accelerated(instance_type) else CPU_DEFAULT_QUOTA


def quota_types() -> list[str]:
    """Every HyperPod instance type has a cluster-usage quota (botocore's enum)."""
    return list(service_model("sagemaker").shape_for("ClusterInstanceType").enum)


def quota_code(instance_type: str) -> str:
    """A stable, AWS-looking quota code per type (L- plus 8 hex digits)."""
    return "L-" + hashlib.sha256(instance_type.encode()).hexdigest()[:8].upper()


def quota_name(instance_type: str) -> str:
    return f"{instance_type} for cluster usage"


class Capacity:
    """Reads and writes the `capacity` / `quotas` overrides kept in the world state."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state

    def capacity(self, instance_type: str, az: str) -> int:
        override = self.state.setdefault("capacity", {}).get(f"{instance_type}@{az}")
        return int(override) if override is not None else default_capacity(instance_type, az)

    def set_capacity(self, instance_type: str, az: str, count: int) -> None:
        self.state.setdefault("capacity", {})[f"{instance_type}@{az}"] = count

    def applied(self, instance_type: str) -> int | None:
        """The applied (increased) value, or None when only AWS's default applies."""
        quotas = self.state.setdefault("quotas", {})
        value = quotas[instance_type] if instance_type in quotas \
            else APPROVED.get(instance_type)
        return None if value is None else int(value)

    def limit(self, instance_type: str) -> int:
        """What CreateCluster / UpdateCluster enforce: the applied value, else the default."""
        applied = self.applied(instance_type)
        return default_quota(instance_type) if applied is None else applied

    def set_quota(self, instance_type: str, value: int | None) -> None:
        """Apply a value (an approved increase); None removes it (back to the default)."""
        self.state.setdefault("quotas", {})[instance_type] = value
