"""QuotasPort over boto3 (Service Quotas, service code `sagemaker`).

ListServiceQuotas returns applied values only: a quota never increased in the account is not
listed (botocore: "if the applied quota value is not available for a quota, the quota is not
retrieved"). Its value is then AWS's default, read with ListAWSDefaultServiceQuotas; for most
GPU instance types a fresh account's default is 0.
"""

from __future__ import annotations

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


def quota_name(instance_type: str) -> str:
    return f"{instance_type} for cluster usage"


class QuotasAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def cluster_quota(self, instance_type: str) -> Shape | None:
        """The account's '<type> for cluster usage' quota: `{"value", "source", "quota_code",
        "quota_name"}` with source "applied" (an increase is in place) or "default" (AWS's
        default, no applied value), or None when AWS has no such quota."""
        for source, operation in (("applied", "list_service_quotas"),
                                  ("default", "list_aws_default_service_quotas")):
            found = await self._find(operation, quota_name(instance_type))
            if found is not None:
                return {"value": float(found["Value"]), "source": source,
                        "quota_code": found.get("QuotaCode"), "quota_name": found["QuotaName"]}
        return None

    async def sagemaker_cluster_quota(self, instance_type: str) -> float | None:
        """The limit that applies: the applied value, else AWS's default (None: no quota)."""
        found = await self.cluster_quota(instance_type)
        return None if found is None else float(found["value"])

    async def _find(self, operation: str, wanted: str) -> Shape | None:
        token: str | None = None
        while True:
            page = await self.aws.call("service-quotas", operation, ServiceCode="sagemaker",
                                       **({"NextToken": token} if token else {}))
            for quota in page["Quotas"]:
                if quota.get("QuotaName") == wanted:
                    return dict(quota)
            token = page.get("NextToken")
            if not token:
                return None
