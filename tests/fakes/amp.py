"""AmpPort in memory: workspaces by id; a created one is ACTIVE at once (the sandbox runs the
real lifecycle), a deleted one is gone."""

from __future__ import annotations

import itertools
from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]


class FakeAmp(FakePort):
    service = "amp"

    def __init__(self) -> None:
        super().__init__()
        self.workspaces: dict[str, Shape] = {}
        self._ids = itertools.count(1)

    async def create_workspace(self, alias: str, tags: dict[str, str],
                               client_token: str | None = None) -> Shape:
        self._enter("create_workspace", alias=alias, tags=tags)
        ws_id = f"ws-{next(self._ids):08x}-0000-0000-0000-000000000000"
        ws = {"workspaceId": ws_id, "alias": alias, "tags": dict(tags),
              "arn": f"arn:aws:aps:us-west-2:123456789012:workspace/{ws_id}",
              "status": {"statusCode": "ACTIVE"},
              "prometheusEndpoint": f"https://aps-workspaces.us-west-2.amazonaws.com/"
                                    f"workspaces/{ws_id}/"}
        self.workspaces[ws_id] = ws
        return dict(ws)

    async def describe_workspace(self, workspace_id: str) -> Shape | None:
        found = self.workspaces.get(workspace_id)
        return dict(found) if found else None

    async def list_workspaces(self) -> list[Shape]:
        return [dict(w) for w in self.workspaces.values()]

    async def delete_workspace(self, workspace_id: str,
                               client_token: str | None = None) -> None:
        self._enter("delete_workspace", workspaceId=workspace_id)
        if self.workspaces.pop(workspace_id, None) is None:
            raise self.refuse("delete_workspace", "ResourceNotFoundException", workspace_id)
