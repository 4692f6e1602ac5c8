"""FsxPort over boto3 (FSx API Reference: CreateFileSystem, DescribeFileSystems,
DeleteFileSystem, UpdateFileSystem with StorageCapacity). DescribeFileSystems pages with
NextToken; an unknown id answers FileSystemNotFound, which `describe_file_system` reads as None."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


class FsxAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def create_file_system(self, client_token: str | None = None,
                                 **params: Any) -> Shape:
        if client_token:
            params["ClientRequestToken"] = client_token
        result = await self.aws.call("fsx", "create_file_system", **params)
        return dict(result["FileSystem"])

    async def describe_file_systems(self) -> list[Shape]:
        out: list[Shape] = []
        token: str | None = None
        while True:
            page = await self.aws.call("fsx", "describe_file_systems",
                                       **({"NextToken": token} if token else {}))
            out += page.get("FileSystems") or []
            token = page.get("NextToken")
            if not token:
                return out

    async def describe_file_system(self, file_system_id: str) -> Shape | None:
        found = await self.aws.maybe("fsx", "describe_file_systems",
                                     FileSystemIds=[file_system_id])
        systems = (found or {}).get("FileSystems") or []
        return dict(systems[0]) if systems else None

    async def delete_file_system(self, file_system_id: str,
                                 client_token: str | None = None) -> Shape:
        params: dict[str, Any] = {"FileSystemId": file_system_id}
        if client_token:
            params["ClientRequestToken"] = client_token
        return await self.aws.call("fsx", "delete_file_system", **params)

    async def update_storage_capacity(self, file_system_id: str, capacity_gib: int,
                                      client_token: str | None = None) -> Shape:
        params: dict[str, Any] = {"FileSystemId": file_system_id,
                                  "StorageCapacity": capacity_gib}
        if client_token:
            params["ClientRequestToken"] = client_token
        result = await self.aws.call("fsx", "update_file_system", **params)
        return dict(result["FileSystem"])
