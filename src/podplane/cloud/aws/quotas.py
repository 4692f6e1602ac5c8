"""QuotasPort over boto3 (Service Quotas, service code `sagemaker`)."""

from __future__ import annotations

from podplane.cloud.aws.caller import AwsCaller


class QuotasAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def sagemaker_cluster_quota(self, instance_type: str) -> float | None:
        """The account's '<type> for cluster usage' quota, or None if AWS has no such quota."""
        wanted = f"{instance_type} for cluster usage"
        token: str | None = None
        while True:
            page = await self.aws.call("service-quotas", "list_service_quotas",
                                       ServiceCode="sagemaker",
                                       **({"NextToken": token} if token else {}))
            for quota in page["Quotas"]:
                if quota.get("QuotaName") == wanted:
                    return float(quota["Value"])
            token = page.get("NextToken")
            if not token:
                return None
