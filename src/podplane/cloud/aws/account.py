"""AccountPort over boto3: STS caller identity, IAM role lookup and policy simulation."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


class AccountAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    @property
    def region(self) -> str:
        return self.aws.region

    async def caller_identity(self) -> Shape:
        return await self.aws.call("sts", "get_caller_identity")

    async def get_role(self, name: str) -> Shape | None:
        found = await self.aws.maybe("iam", "get_role", RoleName=name)
        return None if found is None else dict(found["Role"])

    async def simulate(self, principal_arn: str, actions: list[str], resources: list[str],
                       context: dict[str, str]) -> list[Shape]:
        """IAM SimulatePrincipalPolicy: one result per (action, resource), every page."""
        params: dict[str, Any] = {"PolicySourceArn": principal_arn, "ActionNames": actions,
                                  "ResourceArns": resources}
        if context:
            params["ContextEntries"] = [
                {"ContextKeyName": key, "ContextKeyValues": [value], "ContextKeyType": "string"}
                for key, value in context.items()]
        results: list[Shape] = []
        while True:
            page = await self.aws.call("iam", "simulate_principal_policy", **params)
            results += page.get("EvaluationResults", [])
            if not page.get("IsTruncated"):
                return results
            params["Marker"] = page["Marker"]
