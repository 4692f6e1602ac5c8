"""AccountPort in memory: an identity, roles by name and the actions the policy allows."""

from __future__ import annotations

from typing import Any


class FakeAccount:
    region = "us-west-2"

    def __init__(self, arn: str = "arn:aws:iam::111122223333:user/podplane") -> None:
        self.arn = arn
        self.roles: dict[str, dict[str, Any]] = {}
        self.allowed: set[str] = set()

    async def caller_identity(self) -> dict[str, Any]:
        return {"Account": self.arn.split(":")[4], "Arn": self.arn, "UserId": "AIDAFAKE"}

    async def get_role(self, name: str) -> dict[str, Any] | None:
        return self.roles.get(name)

    async def simulate(self, principal_arn: str, actions: list[str], resources: list[str],
                       context: dict[str, str]) -> list[dict[str, Any]]:
        return [{"EvalActionName": a, "EvalResourceName": r,
                 "EvalDecision": "allowed" if a in self.allowed else "implicitDeny"}
                for a in actions for r in resources]
