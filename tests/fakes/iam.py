"""IamPort in memory: roles with their trust policy, tags and policies; OIDC providers."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]


class FakeIam(FakePort):
    service = "iam"

    def __init__(self, account: str = "111122223333") -> None:
        super().__init__()
        self.account = account
        self.roles: dict[str, Shape] = {}
        self.attached: dict[str, list[str]] = {}
        self.inline: dict[str, dict[str, str]] = {}
        self.providers: dict[str, Shape] = {}

    async def get_role(self, name: str) -> Shape | None:
        self._enter("get_role", name=name)
        return dict(self.roles[name]) if name in self.roles else None

    async def create_role(self, name: str, trust_policy: str,
                          tags: list[dict[str, str]]) -> Shape:
        self._enter("create_role", name=name)
        if name in self.roles:
            raise self.refuse("create_role", "EntityAlreadyExists", name)
        self.roles[name] = {"RoleName": name, "Arn": f"arn:aws:iam::{self.account}:role/{name}",
                            "AssumeRolePolicyDocument": trust_policy, "Tags": list(tags)}
        self.attached[name], self.inline[name] = [], {}
        return dict(self.roles[name])

    def _role(self, operation: str, name: str) -> None:
        if name not in self.roles:
            raise self.refuse(operation, "NoSuchEntity", name)

    async def delete_role(self, name: str) -> None:
        self._enter("delete_role", name=name)
        self._role("delete_role", name)
        if self.attached[name] or self.inline[name]:
            raise self.refuse("delete_role", "DeleteConflict", name)
        del self.roles[name]

    async def list_attached_role_policies(self, role: str) -> list[Shape]:
        self._role("list_attached_role_policies", role)
        return [{"PolicyArn": arn} for arn in self.attached[role]]

    async def attach_role_policy(self, role: str, policy_arn: str) -> None:
        self._enter("attach_role_policy", role=role, arn=policy_arn)
        self.attached[role].append(policy_arn)

    async def detach_role_policy(self, role: str, policy_arn: str) -> None:
        self._enter("detach_role_policy", role=role, arn=policy_arn)
        self.attached[role].remove(policy_arn)

    async def list_role_policies(self, role: str) -> list[str]:
        return list(self.inline[role])

    async def put_role_policy(self, role: str, policy_name: str, document: str) -> None:
        self._enter("put_role_policy", role=role, name=policy_name)
        self.inline[role][policy_name] = document

    async def get_role_policy(self, role: str, policy_name: str) -> Shape | None:
        doc = self.inline.get(role, {}).get(policy_name)
        return None if doc is None else dict(json.loads(doc))

    async def delete_role_policy(self, role: str, policy_name: str) -> None:
        self._enter("delete_role_policy", role=role, name=policy_name)
        del self.inline[role][policy_name]

    async def list_open_id_connect_providers(self) -> list[Shape]:
        return [{"Arn": arn} for arn in self.providers]

    async def get_open_id_connect_provider(self, arn: str) -> Shape | None:
        return dict(self.providers[arn]) if arn in self.providers else None

    async def create_open_id_connect_provider(self, url: str, client_ids: list[str],
                                              tags: list[dict[str, str]]) -> str:
        self._enter("create_open_id_connect_provider", url=url)
        arn = f"arn:aws:iam::{self.account}:oidc-provider/{url.removeprefix('https://')}"
        self.providers[arn] = {"Url": url, "ClientIDList": client_ids, "Tags": tags}
        return arn

    async def delete_open_id_connect_provider(self, arn: str) -> None:
        self._enter("delete_open_id_connect_provider", arn=arn)
        del self.providers[arn]
