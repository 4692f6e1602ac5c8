"""Service Quotas for SageMaker (`<type> for cluster usage`); other service codes go to moto.

As AWS answers (botocore's documentation of each operation): ListServiceQuotas and
GetServiceQuota return applied values only ("if the applied quota value is not available for a
quota, the quota is not retrieved"); ListAWSDefaultServiceQuotas and GetAWSDefaultServiceQuota
return the defaults, which do not reflect increases.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.base import Emulator, paginate
from podplane_sandbox.aws.errors import AwsError
from podplane_sandbox.aws.hyperpod.capacity import (
    Capacity,
    default_quota,
    quota_code,
    quota_name,
    quota_types,
)


class QuotasEmulator(Emulator):
    service = "service-quotas"

    def accepts(self, action: str, params: dict[str, Any]) -> bool:
        return self.handles(action) and params.get("ServiceCode") == "sagemaker"

    @property
    def cap(self) -> Capacity:
        return Capacity(self.w.service_state("capacity"))

    def _quota(self, itype: str, value: int) -> dict[str, Any]:
        code = quota_code(itype)
        return {"ServiceCode": "sagemaker", "ServiceName": "Amazon SageMaker",
                "QuotaArn": self.w.arn("servicequotas", f"sagemaker/{code}"),
                "QuotaCode": code, "QuotaName": quota_name(itype), "Value": float(value),
                "Unit": "None", "Adjustable": True, "GlobalQuota": False,
                "QuotaAppliedAtLevel": "ACCOUNT",
                "UsageMetric": {"MetricNamespace": "AWS/Usage", "MetricName": "ResourceCount",
                                "MetricDimensions": {"Service": "SageMaker", "Type": "Resource",
                                                     "Resource": f"cluster-{itype}",
                                                     "Class": "None"},
                                "MetricStatisticRecommendation": "Maximum"}}

    def _applied(self) -> list[dict[str, Any]]:
        return [self._quota(t, value) for t in quota_types()
                if (value := self.cap.applied(t)) is not None]

    def _defaults(self) -> list[dict[str, Any]]:
        return [self._quota(t, default_quota(t)) for t in quota_types()]

    def _by_code(self, code: str) -> str:
        for itype in quota_types():
            if quota_code(itype) == code:
                return itype
        raise _no_such_quota(code)

    def get_service_quota(self, p: dict[str, Any]) -> dict[str, Any]:
        itype = self._by_code(p["QuotaCode"])
        value = self.cap.applied(itype)
        if value is None:  # only the default exists: the applied quota is "not retrieved"
            raise _no_such_quota(p["QuotaCode"])
        return {"Quota": self._quota(itype, value)}

    def get_awsdefault_service_quota(self, p: dict[str, Any]) -> dict[str, Any]:
        itype = self._by_code(p["QuotaCode"])
        return {"Quota": self._quota(itype, default_quota(itype))}

    def list_service_quotas(self, p: dict[str, Any]) -> dict[str, Any]:
        items = self._applied()
        if p.get("QuotaCode"):
            items = [q for q in items if q["QuotaCode"] == p["QuotaCode"]]
        page, nxt = paginate(items, p, "MaxResults", "NextToken")
        return {"Quotas": page, **({"NextToken": nxt} if nxt else {})}

    def list_awsdefault_service_quotas(self, p: dict[str, Any]) -> dict[str, Any]:
        page, nxt = paginate(self._defaults(), p, "MaxResults", "NextToken")
        return {"Quotas": page, **({"NextToken": nxt} if nxt else {})}

    def request_service_quota_increase(self, p: dict[str, Any]) -> dict[str, Any]:
        """The sandbox approves increases at once (real AWS takes hours to days)."""
        itype = self._by_code(p["QuotaCode"])
        self.cap.set_quota(itype, int(p["DesiredValue"]))
        self.w.record("service-quotas", "RequestServiceQuotaIncrease", p["QuotaCode"],
                      desired=p["DesiredValue"])
        now = self.w.now()
        return {"RequestedQuota": {
            "Id": self.w.hex_id(32), "ServiceCode": "sagemaker", "ServiceName":
            "Amazon SageMaker", "QuotaCode": p["QuotaCode"], "QuotaName": quota_name(itype),
            "DesiredValue": float(p["DesiredValue"]), "Status": "APPROVED", "Created": now,
            "LastUpdated": now, "Requester": "arn:aws:iam::123456789012:user/moto",
            "QuotaArn": self.w.arn("servicequotas", f"sagemaker/{p['QuotaCode']}"),
            "GlobalQuota": False, "Unit": "None"}}


def _no_such_quota(code: str) -> AwsError:
    return AwsError("NoSuchResourceException",
                    f"The request failed because the specified quota {code} does not exist.")
