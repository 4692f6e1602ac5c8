"""The Amazon Managed Service for Prometheus port: the workspace operations podplane sends
(AMP API Reference; botocore `amp` model), named as boto3 names them. Inputs and results are
the API's shapes."""

from __future__ import annotations

from typing import Protocol

from podplane.cloud.ports_aws import Shape


class AmpPort(Protocol):
    async def create_workspace(self, alias: str, tags: dict[str, str],
                               client_token: str | None = None) -> Shape: ...
    async def describe_workspace(self, workspace_id: str) -> Shape | None: ...
    async def list_workspaces(self) -> list[Shape]: ...
    async def delete_workspace(self, workspace_id: str,
                               client_token: str | None = None) -> None: ...
