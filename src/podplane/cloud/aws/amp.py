"""AmpPort over boto3 (AMP API Reference: CreateWorkspace, DescribeWorkspace, ListWorkspaces,
DeleteWorkspace). ListWorkspaces pages with nextToken; an unknown id answers
ResourceNotFoundException, which `describe_workspace` reads as None."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


class AmpAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def create_workspace(self, alias: str, tags: dict[str, str],
                               client_token: str | None = None) -> Shape:
        params: dict[str, Any] = {"alias": alias, "tags": tags}
        if client_token:
            params["clientToken"] = client_token
        result = await self.aws.call("amp", "create_workspace", **params)
        return {k: v for k, v in result.items() if k != "ResponseMetadata"}

    async def describe_workspace(self, workspace_id: str) -> Shape | None:
        found = await self.aws.maybe("amp", "describe_workspace", workspaceId=workspace_id)
        return dict(found["workspace"]) if found else None

    async def list_workspaces(self) -> list[Shape]:
        out: list[Shape] = []
        token: str | None = None
        while True:
            page = await self.aws.call("amp", "list_workspaces",
                                       **({"nextToken": token} if token else {}))
            out += page.get("workspaces") or []
            token = page.get("nextToken")
            if not token:
                return out

    async def delete_workspace(self, workspace_id: str,
                               client_token: str | None = None) -> None:
        params: dict[str, Any] = {"workspaceId": workspace_id}
        if client_token:
            params["clientToken"] = client_token
        await self.aws.call("amp", "delete_workspace", **params)
