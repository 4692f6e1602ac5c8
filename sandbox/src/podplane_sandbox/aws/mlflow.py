"""SageMaker managed MLflow tracking servers (moto has none of these APIs).

Rules, from the SageMaker API Reference and botocore's `sagemaker` model (shapes, patterns and
enums are checked by the router from the model before we run):

- CreateMlflowTrackingServer: TrackingServerName, ArtifactStoreUri, RoleArn required;
  TrackingServerSize Small (default) | Medium | Large; answers the ARN
  `arn:aws:sagemaker:<region>:<account>:mlflow-tracking-server/<name>` while the server is
  `Creating`; it becomes `Created` (IsActive `Active`) minutes later. The role must exist and
  let sagemaker.amazonaws.com assume it (the service's own "Could not assume role" refusal,
  also what it answers while IAM propagates); the artifact store must be an existing
  general-purpose bucket (an `s3://` URI). A second server of the same name is refused.
- UpdateMlflowTrackingServer: `Updating` -> `Updated`; refused (ConflictException) while the
  server is not settled.
- DeleteMlflowTrackingServer: `Deleting`, then ResourceNotFound for the name.
- ListMlflowTrackingServers: summaries, filtered by status, sorted by Name / CreationTime /
  Status.
- CreatePresignedMlflowTrackingServerUrl: an `AuthorizedUrl` on the server's UI host;
  ExpiresInSeconds 5-300, SessionExpirationDurationInSeconds 1800-43200 (model bounds).
- TrackingServerUrl: `https://t-<id>.<region>.experiments.sagemaker.aws` (the UI); the REST API
  is served to clients that sign for `sagemaker-mlflow` and name the server's ARN in
  `x-mlflow-sm-tracking-server-arn` (aws/mlflow_tracking.py).
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.base import Emulator, paginate
from podplane_sandbox.aws.errors import AwsError, sm_conflict, sm_not_found, sm_validation
from podplane_sandbox.aws.world import ACCOUNT, World

CREATE_SECONDS = 20 * 60.0   # creating a tracking server takes many minutes
UPDATE_SECONDS = 10 * 60.0
DELETE_SECONDS = 5 * 60.0
SETTLED = ("Created", "Updated", "CreateFailed", "UpdateFailed", "Started", "Stopped",
           "MaintenanceComplete")
MUTATIONS = ("CreateMlflowTrackingServer", "UpdateMlflowTrackingServer",
             "DeleteMlflowTrackingServer")


class MlflowEmulator(Emulator):
    service = "sagemaker"
    OPERATIONS = frozenset(("CreateMlflowTrackingServer", "DescribeMlflowTrackingServer",
                            "UpdateMlflowTrackingServer", "DeleteMlflowTrackingServer",
                            "ListMlflowTrackingServers",
                            "CreatePresignedMlflowTrackingServerUrl"))

    def __init__(self, world: World) -> None:
        super().__init__(world)

    @property
    def servers(self) -> dict[str, Any]:
        return self.w.service_state("sagemaker-mlflow").setdefault("tracking_servers", {})

    def accepts(self, action: str, params: dict[str, Any]) -> bool:
        return action in self.OPERATIONS

    def tick(self, now: float) -> None:
        for name, server in list(self.servers.items()):
            if now < server["_until"]:
                continue
            status = server["TrackingServerStatus"]
            if status == "Deleting":
                del self.servers[name]
                self.w.service_state("sagemaker").get("tags", {}).pop(
                    server["TrackingServerArn"], None)
            elif status in ("Creating", "Updating"):
                server["TrackingServerStatus"] = "Created" if status == "Creating" \
                    else "Updated"
                server["IsActive"] = "Active"

    # API ------------------------------------------------------------------------------------
    def create_mlflow_tracking_server(self, p: dict[str, Any]) -> dict[str, Any]:
        name = p["TrackingServerName"]
        if name in self.servers:
            raise AwsError("ResourceInUse", f"Tracking server with name {name} already "
                           "exists.")
        _check_role(self.w, p["RoleArn"])
        _check_store(p["ArtifactStoreUri"])
        arn = self.w.arn("sagemaker", f"mlflow-tracking-server/{name}")
        now = self.w.now()
        self.servers[name] = {
            "TrackingServerArn": arn, "TrackingServerName": name,
            "ArtifactStoreUri": p["ArtifactStoreUri"],
            "TrackingServerSize": p.get("TrackingServerSize") or "Small",
            "MlflowVersion": p.get("MlflowVersion") or "3.0",
            "RoleArn": p["RoleArn"], "TrackingServerStatus": "Creating", "IsActive": "Inactive",
            "TrackingServerUrl": f"https://t-{self.w.hex_id(12)}.{self.w.region}."
                                 "experiments.sagemaker.aws",
            "WeeklyMaintenanceWindowStart": p.get("WeeklyMaintenanceWindowStart") or
            "Tue:03:30", "AutomaticModelRegistration": bool(p.get("AutomaticModelRegistration")),
            "CreationTime": now, "LastModifiedTime": now,
            "_tags": list(p.get("Tags") or []), "_until": now + CREATE_SECONDS}
        # tags live where SageMaker's AddTags/ListTags find them (hyperpod/tags.py)
        self.w.service_state("sagemaker").setdefault("tags", {})[arn] = list(
            p.get("Tags") or [])
        self.w.record("sagemaker", "CreateMlflowTrackingServer", arn, None)
        return {"TrackingServerArn": arn}

    def describe_mlflow_tracking_server(self, p: dict[str, Any]) -> dict[str, Any]:
        return dict(self._server(p["TrackingServerName"]))

    def update_mlflow_tracking_server(self, p: dict[str, Any]) -> dict[str, Any]:
        server = self._server(p["TrackingServerName"])
        if server["TrackingServerStatus"] not in SETTLED:
            raise sm_conflict(f"Tracking server {server['TrackingServerName']} is "
                              f"{server['TrackingServerStatus']}; it cannot be updated now.")
        if p.get("ArtifactStoreUri"):
            _check_store(p["ArtifactStoreUri"])
        for key in ("ArtifactStoreUri", "TrackingServerSize", "WeeklyMaintenanceWindowStart",
                    "AutomaticModelRegistration"):
            if key in p:
                server[key] = p[key]
        server.update(TrackingServerStatus="Updating", LastModifiedTime=self.w.now(),
                      _until=self.w.now() + UPDATE_SECONDS)
        self.w.record("sagemaker", "UpdateMlflowTrackingServer", server["TrackingServerArn"],
                      None)
        return {"TrackingServerArn": server["TrackingServerArn"]}

    def delete_mlflow_tracking_server(self, p: dict[str, Any]) -> dict[str, Any]:
        server = self._server(p["TrackingServerName"])
        if server["TrackingServerStatus"] in ("Creating", "Updating"):
            raise sm_validation(f"Tracking server {server['TrackingServerName']} is "
                                f"{server['TrackingServerStatus']}; delete it once it settles.")
        if server["TrackingServerStatus"] != "Deleting":
            server.update(TrackingServerStatus="Deleting", IsActive="Inactive",
                          _until=self.w.now() + DELETE_SECONDS)
            self.w.record("sagemaker", "DeleteMlflowTrackingServer",
                          server["TrackingServerArn"], None)
        return {"TrackingServerArn": server["TrackingServerArn"]}

    def list_mlflow_tracking_servers(self, p: dict[str, Any]) -> dict[str, Any]:
        found = [s for s in self.servers.values()
                 if p.get("TrackingServerStatus") in (None, s["TrackingServerStatus"])]
        key = {"Name": "TrackingServerName", "Status": "TrackingServerStatus"}.get(
            p.get("SortBy") or "CreationTime", "CreationTime")
        found.sort(key=lambda s: s[key], reverse=p.get("SortOrder") == "Descending")
        summaries = [{k: s[k] for k in ("TrackingServerArn", "TrackingServerName",
                                        "CreationTime", "LastModifiedTime",
                                        "TrackingServerStatus", "IsActive", "MlflowVersion")}
                     for s in found]
        page, nxt = paginate(summaries, p, "MaxResults", "NextToken")
        return {"TrackingServerSummaries": page, **({"NextToken": nxt} if nxt else {})}

    def create_presigned_mlflow_tracking_server_url(self, p: dict[str, Any]
                                                     ) -> dict[str, Any]:
        server = self._server(p["TrackingServerName"])
        token = self.w.hex_id(32)
        return {"AuthorizedUrl": f"{server['TrackingServerUrl']}/auth?authToken={token}"}

    def _server(self, name: str) -> dict[str, Any]:
        server = self.servers.get(name)
        if server is None:
            raise sm_not_found(f"Tracking server with name {name} not found.")
        return server  # type: ignore[no-any-return]


def server_by_arn(world: World, arn: str) -> dict[str, Any] | None:
    """A tracking server as DescribeMlflowTrackingServer shows it, by ARN (the tracking
    endpoint routes on it); None when there is none."""
    with world.lock:
        world.tick()
        for server in world.service_state("sagemaker-mlflow").get("tracking_servers",
                                                                   {}).values():
            if server["TrackingServerArn"] == arn:
                return dict(server)
    return None


def _check_role(w: World, arn: str) -> None:
    from podplane_sandbox.aws.iam_rules import _usable

    if not _usable(w, arn, "sagemaker.amazonaws.com"):
        raise sm_validation(f"Could not assume role {arn}. Please ensure that the role exists "
                            "and allows principal 'sagemaker.amazonaws.com' to assume the "
                            "role.")


def _check_store(uri: str) -> None:
    from moto.s3.models import s3_backends

    if not uri.startswith("s3://"):
        raise sm_validation("ArtifactStoreUri must be an s3:// URI of a general purpose "
                            "bucket.")
    bucket = uri.removeprefix("s3://").split("/", 1)[0]
    if bucket not in s3_backends[ACCOUNT]["aws"].buckets:
        raise sm_validation(f"The artifact store bucket {bucket} does not exist.")
