"""SageMaker managed MLflow: observing and changing the tracking server
(domain/features/mlflow.py says what the feature is).

SageMaker API: CreateMlflowTrackingServer answers with the ARN while the server is Creating;
it serves once Created (CreateFailed otherwise). UpdateMlflowTrackingServer (size) moves it to
Updating, then Updated. DeleteMlflowTrackingServer moves it to Deleting, and
DescribeMlflowTrackingServer answers ResourceNotFound once it is gone (botocore `sagemaker`,
TrackingServerStatus). A server is podplane's when it has podplane's name for the cluster and
runs with podplane's role; a server named by the user is only observed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podplane.domain.errors import CloudError, InvalidInput
from podplane.domain.features import mlflow as mlf
from podplane.domain.features.model import Resource, Seen
from podplane.domain.reconcile import Verb
from podplane.ops.context import StepContext
from podplane.services.iam_retry import while_iam_propagates

if TYPE_CHECKING:   # live.py reads the tracking server through this module
    from podplane.services.features.live import Live

Shape = dict[str, Any]
POLL_SECONDS = 60.0
DEADLINE_SECONDS = 60 * 60.0   # creation takes minutes (up to about half an hour)
SERVING = ("Created", "Updated", "Started", "MaintenanceComplete")
FAILED = ("CreateFailed", "UpdateFailed", "DeleteFailed")


async def server_seen(live: Live, res: Resource) -> Seen:
    want = res.desired
    found = await live.cloud.aws.mlflow.describe_tracking_server(want["TrackingServerName"])
    if found is None or found.get("TrackingServerStatus") == "Deleting":
        return Seen(None)
    if "RoleArn" not in want:   # the user's own server: there, never ours
        return Seen({"TrackingServerName": found.get("TrackingServerName")}, owned=False)
    live_shape = {k: found.get(k) for k in
                  ("TrackingServerName", "ArtifactStoreUri", "TrackingServerSize", "RoleArn")}
    # Describe shows no tags: what was asked at create is taken as there
    live_shape["Tags"] = dict(want["Tags"])
    return Seen(live_shape, owned=found.get("RoleArn") == want["RoleArn"])


async def check(live: Live, settings: Shape) -> None:
    """A named server must exist and serve before jobs are pointed at it."""
    name = mlf.existing_name(settings)
    if not name:
        return
    found = await live.cloud.aws.mlflow.describe_tracking_server(name)
    if found is None:
        raise InvalidInput(f"No MLflow tracking server named {name!r} in this account and "
                           "region.", field="tracking_server")


async def server_change(ctx: StepContext, live: Live, verb: Verb, res: Resource) -> None:
    port = live.cloud.aws.mlflow
    want = res.desired
    name = want["TrackingServerName"]
    if "RoleArn" not in want:   # the user's server: never created, changed or deleted here
        if verb == "create":
            raise CloudError(f"The tracking server {name} no longer exists.",
                             code="tracking_server_missing", retryable=False,
                             hint="Name another tracking_server, or leave it empty.")
        return
    if verb == "delete":
        found = await port.describe_tracking_server(name)
        if found is not None and found.get("TrackingServerStatus") != "Deleting":
            await port.delete_tracking_server(name)
        await _wait(ctx, live, name, lambda s: s is None)
        return
    found = await _wait(ctx, live, name, lambda s: s is None or _settled(s))
    if found is None:
        await while_iam_propagates(ctx, want["RoleArn"], lambda: port.create_tracking_server(
            **mlf.create_request(res)))
    elif verb == "update" and found.get("TrackingServerSize") != want["TrackingServerSize"]:
        await port.update_tracking_server(TrackingServerName=name,
                                          TrackingServerSize=want["TrackingServerSize"])
    done = await _wait(ctx, live, name, lambda s: s is not None and _settled(s)
                       and s.get("TrackingServerStatus") not in ("Creating", "Updating"))
    status = (done or {}).get("TrackingServerStatus")
    if status in FAILED:
        raise CloudError(f"SageMaker could not make the tracking server {name}: {status}.",
                         code="tracking_server_failed", retryable=False,
                         hint="Check the server's role and artifact store, disable mlflow, "
                              "then enable it again.")


def _settled(server: Shape) -> bool:
    return server.get("TrackingServerStatus") in SERVING + FAILED


async def _wait(ctx: StepContext, live: Live, name: str,
                done: Callable[[Shape | None], bool]) -> Shape | None:
    for _ in range(int(DEADLINE_SECONDS / POLL_SECONDS)):
        found = await live.cloud.aws.mlflow.describe_tracking_server(name)
        if done(found):
            return found
        await ctx.sleep(POLL_SECONDS)
    raise CloudError(f"The tracking server {name} did not settle in "
                     f"{DEADLINE_SECONDS / 60:.0f} minutes.", code="tracking_server_timeout",
                     retryable=True)
