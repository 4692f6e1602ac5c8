"""FsxPort in memory: file systems by id; a created one is AVAILABLE at once (the sandbox
runs the real lifecycle), a deleted one is gone."""

from __future__ import annotations

import itertools
from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]


class FakeFsx(FakePort):
    service = "fsx"

    def __init__(self) -> None:
        super().__init__()
        self.systems: dict[str, Shape] = {}
        self._ids = itertools.count(1)

    async def create_file_system(self, client_token: str | None = None,
                                 **params: Any) -> Shape:
        self._enter("create_file_system", **params)
        fs_id = f"fs-{next(self._ids):017x}"
        lustre = {**params.get("LustreConfiguration", {}), "MountName": "abcdefgh"}
        fs = {**params, "FileSystemId": fs_id, "Lifecycle": "AVAILABLE",
              "DNSName": f"{fs_id}.fsx.us-west-2.amazonaws.com", "LustreConfiguration": lustre}
        fs.pop("SecurityGroupIds", None)
        self.systems[fs_id] = fs
        return dict(fs)

    async def describe_file_systems(self) -> list[Shape]:
        self._enter("describe_file_systems")
        return [dict(f) for f in self.systems.values()]

    async def describe_file_system(self, file_system_id: str) -> Shape | None:
        self._enter("describe_file_systems", FileSystemIds=[file_system_id])
        found = self.systems.get(file_system_id)
        return dict(found) if found else None

    async def delete_file_system(self, file_system_id: str,
                                 client_token: str | None = None) -> Shape:
        self._enter("delete_file_system", FileSystemId=file_system_id)
        if self.systems.pop(file_system_id, None) is None:
            raise self.refuse("delete_file_system", "FileSystemNotFound", file_system_id)
        return {"FileSystemId": file_system_id, "Lifecycle": "DELETING"}

    async def update_storage_capacity(self, file_system_id: str, capacity_gib: int,
                                      client_token: str | None = None) -> Shape:
        self._enter("update_file_system", FileSystemId=file_system_id,
                    StorageCapacity=capacity_gib)
        self.systems[file_system_id]["StorageCapacity"] = capacity_gib
        return dict(self.systems[file_system_id])
