"""Finite capacity per AZ per instance type, and SageMaker cluster-usage quotas.

Capacity is what the region can give right now (the insufficient-capacity path); quotas are the
account's limits (the ResourceLimitExceeded path). Both are plain tables a test can change.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.catalog import CATALOG
from podplane.sandbox.aws.world import AZS

# per-AZ free capacity for the biggest GPU types is deliberately small and uneven
_BIG = {"ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.p4d.24xlarge",
        "ml.p4de.24xlarge", "ml.trn1.32xlarge", "ml.trn1n.32xlarge"}
_BIG_PER_AZ = {"us-west-2a": 8, "us-west-2b": 16, "us-west-2c": 4, "us-west-2d": 0}


def default_capacity(instance_type: str, az: str) -> int:
    if instance_type in _BIG:
        return _BIG_PER_AZ[az]
    return 64


def default_quota(instance_type: str) -> int:
    entry = CATALOG.get(instance_type)
    if instance_type in _BIG:
        return 16
    if entry and entry.accelerated:
        return 32
    return 64


def quota_code(instance_type: str) -> str:
    """A stable, AWS-looking quota code per type (L- plus 8 hex digits)."""
    digest = sum((i + 1) * ord(ch) for i, ch in enumerate(instance_type)) * 2654435761
    return f"L-{digest % 0xFFFFFFFF:08X}"


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

    def quota(self, instance_type: str) -> int:
        override = self.state.setdefault("quotas", {}).get(instance_type)
        return int(override) if override is not None else default_quota(instance_type)

    def set_quota(self, instance_type: str, value: int) -> None:
        self.state.setdefault("quotas", {})[instance_type] = value

    def azs_with_room(self, instance_type: str, used: dict[str, int]) -> list[str]:
        return [az for az in AZS if self.capacity(instance_type, az) - used.get(az, 0) > 0]
