"""Amazon Managed Service for Prometheus workspaces, with what moto's `amp` backend leaves out.

moto (moto/amp/models.py) makes a workspace ACTIVE at once, ignores `clientToken`, and
forgets a deleted workspace at once, even an unknown one (DeleteWorkspace of any id answers
202). AWS, per the botocore `amp` model (2020-08-01, rest-json, signing name `aps`):

- CreateWorkspace (202) answers `status.statusCode` CREATING, then ACTIVE; `alias` 1-100
  characters, at most 50 tags, `clientToken` makes a retry return the same workspace;
- DescribeWorkspace returns `prometheusEndpoint` `https://aps-workspaces.<region>.amazonaws.com/
  workspaces/<id>/` and the ARN `arn:aws:aps:<region>:<account>:workspace/<id>`;
  an unknown id is ResourceNotFoundException (404);
- DeleteWorkspace (202) answers DELETING; the workspace is gone when done; deleting one that
  is still CREATING is a ConflictException (409);
- ListWorkspaces pages with nextToken/maxResults and filters by alias prefix (the model's
  `alias` documentation: "only the workspaces with aliases that begin with this value").

Shapes and constraints are checked against that model before these rules run (the router
validates every request, as for EKS). Timings are the sandbox's: AWS documents none.
"""

from __future__ import annotations

import re
from typing import Any

from podplane_sandbox.aws.base import Emulator, paginate
from podplane_sandbox.aws.errors import AwsError
from podplane_sandbox.aws.world import World

SIGNING_NAME = "aps"
CREATE_SECONDS = 60.0
DELETE_SECONDS = 60.0
WORKSPACE_ARN = re.compile(r"arn:aws:aps:[a-z0-9-]+:\d{12}:workspace/(ws-[0-9a-f-]+)")


def not_found(ws_id: str) -> AwsError:
    return AwsError("ResourceNotFoundException", f"Workspace {ws_id} not found.", 404,
                    fields={"resourceId": ws_id, "resourceType": "AMP/Workspace"})


def conflict(ws_id: str, status: str) -> AwsError:
    return AwsError("ConflictException", f"Workspace {ws_id} is {status}.", 409,
                    fields={"resourceId": ws_id, "resourceType": "AMP/Workspace"})


class AmpEmulator(Emulator):
    service = "amp"

    def __init__(self, world: World) -> None:
        super().__init__(world)

    @property
    def workspaces(self) -> dict[str, Any]:
        return self.table("workspaces")

    def tick(self, now: float) -> None:
        for ws_id, ws in list(self.workspaces.items()):
            code = ws["status"]["statusCode"]
            if code == "CREATING" and now >= ws["_until"]:
                ws["status"] = {"statusCode": "ACTIVE"}
            elif code == "DELETING" and now >= ws["_until"]:
                del self.workspaces[ws_id]

    # API ------------------------------------------------------------------------------------
    def create_workspace(self, p: dict[str, Any]) -> dict[str, Any]:
        token = p.get("clientToken")
        for ws in self.workspaces.values():
            if token and ws.get("_token") == token:
                return _created(ws)   # an idempotent retry
        ws_id = "ws-" + _uuid(self.w.hex_id(32))
        arn = self.w.arn("aps", f"workspace/{ws_id}")
        ws = {"workspaceId": ws_id, "arn": arn, "status": {"statusCode": "CREATING"},
              "prometheusEndpoint": f"https://aps-workspaces.{self.w.region}.amazonaws.com/"
                                    f"workspaces/{ws_id}/",
              "createdAt": self.w.now(), "tags": dict(p.get("tags") or {}),
              "_until": self.w.now() + CREATE_SECONDS, "_token": token}
        for key in ("alias", "kmsKeyArn"):
            if p.get(key):
                ws[key] = p[key]
        self.workspaces[ws_id] = ws
        self.w.record("amp", "CreateWorkspace", ws_id, token)
        return _created(ws)

    def describe_workspace(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"workspace": self._workspace(p["workspaceId"])}

    def list_workspaces(self, p: dict[str, Any]) -> dict[str, Any]:
        alias = p.get("alias")
        found = [{k: v for k, v in ws.items() if k != "prometheusEndpoint"}
                 for ws in self.workspaces.values()
                 if not alias or str(ws.get("alias", "")).startswith(alias)]
        page, nxt = paginate(found, p, "maxResults", "nextToken")
        return {"workspaces": page, **({"nextToken": nxt} if nxt else {})}

    def delete_workspace(self, p: dict[str, Any]) -> dict[str, Any]:
        ws = self._workspace(p["workspaceId"])
        code = ws["status"]["statusCode"]
        if code in ("CREATING", "UPDATING"):
            raise conflict(ws["workspaceId"], code)
        if code != "DELETING":
            ws.update(status={"statusCode": "DELETING"}, _until=self.w.now() + DELETE_SECONDS)
            self.w.record("amp", "DeleteWorkspace", ws["workspaceId"], p.get("clientToken"))
        return {}

    def _workspace(self, ws_id: str) -> dict[str, Any]:
        ws = self.workspaces.get(ws_id)
        if ws is None:
            raise not_found(ws_id)
        return ws  # type: ignore[no-any-return]


def _created(ws: dict[str, Any]) -> dict[str, Any]:
    return {k: ws[k] for k in ("workspaceId", "arn", "status", "tags")}


def _uuid(hex32: str) -> str:
    h = hex32.ljust(32, "0")[:32]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def workspace_of(world: World, arn: str) -> dict[str, Any] | None:
    """The workspace an ARN names, as the service holds it now (None: no such workspace, or
    one being deleted); read by the HyperPod observability add-on's health (aws/eks)."""
    m = WORKSPACE_ARN.fullmatch(arn or "")
    if m is None:
        return None
    found = world.service_state("amp").get("workspaces", {}).get(m.group(1))
    if found is None or not str(found["arn"]).endswith(m.group(1)) or \
            found["status"]["statusCode"] == "DELETING":
        return None
    return dict(found)

