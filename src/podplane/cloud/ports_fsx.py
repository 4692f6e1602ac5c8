"""The FSx port: the FSx for Lustre file system operations podplane sends (FSx API Reference),
named as boto3 names them. Inputs and results are the FSx API's shapes."""

from __future__ import annotations

from typing import Any, Protocol

from podplane.cloud.ports_aws import Shape


class FsxPort(Protocol):
    async def create_file_system(self, client_token: str | None = None,
                                 **params: Any) -> Shape: ...
    async def describe_file_systems(self) -> list[Shape]: ...
    async def describe_file_system(self, file_system_id: str) -> Shape | None: ...
    async def delete_file_system(self, file_system_id: str,
                                 client_token: str | None = None) -> Shape: ...
    async def update_storage_capacity(self, file_system_id: str, capacity_gib: int,
                                      client_token: str | None = None) -> Shape: ...
