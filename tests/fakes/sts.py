"""StsPort in memory: one fixed identity."""

from __future__ import annotations

from typing import Any


class FakeSts:
    def __init__(self, account: str = "111122223333", user: str = "podplane") -> None:
        self.identity = {"Account": account, "UserId": "AIDAFAKE",
                         "Arn": f"arn:aws:iam::{account}:user/{user}"}

    async def caller_identity(self) -> dict[str, Any]:
        return dict(self.identity)
