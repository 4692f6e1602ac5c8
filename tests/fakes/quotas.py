"""QuotasPort in memory: '<type> for cluster usage' values, applied or AWS's default."""

from __future__ import annotations

from typing import Any


class FakeQuotas:
    def __init__(self) -> None:
        self.values: dict[str, tuple[float, str]] = {}  # type -> (value, applied|default)

    def set(self, instance_type: str, value: float, source: str = "applied") -> None:
        self.values[instance_type] = (value, source)

    async def cluster_quota(self, instance_type: str) -> dict[str, Any] | None:
        if instance_type not in self.values:
            return None
        value, source = self.values[instance_type]
        return {"value": value, "source": source, "quota_code": "L-FAKE",
                "quota_name": f"{instance_type} for cluster usage"}

    async def sagemaker_cluster_quota(self, instance_type: str) -> float | None:
        found = await self.cluster_quota(instance_type)
        return None if found is None else float(found["value"])
