"""HyperPod observability: observing and changing its Prometheus workspace
(domain/features/hyperpod_observability.py says what the feature is).

AMP API (botocore `amp`): CreateWorkspace answers CREATING, the workspace is ACTIVE when
ready (CREATION_FAILED otherwise); DeleteWorkspace answers DELETING and ListWorkspaces stops
listing it when done; DescribeWorkspace of an unknown id is ResourceNotFoundException.
podplane's own workspace is found by its tags; an existing one named by id is only described,
never changed or deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podplane.domain.errors import CloudError, Conflict, InvalidInput
from podplane.domain.features import hyperpod_observability as hpo
from podplane.domain.features.model import Resource, Seen
from podplane.domain.reconcile import Verb
from podplane.ops.context import StepContext

if TYPE_CHECKING:   # live.py reads the workspace through this module
    from podplane.services.features.live import Live

Shape = dict[str, Any]
POLL_SECONDS = 15.0
DEADLINE_SECONDS = 30 * 60.0
GONE = ("DELETING",)


def _status(ws: Shape) -> str:
    return str((ws.get("status") or {}).get("statusCode"))


async def own_workspace(live: Live, cluster: str, deleting: bool = False) -> Shape | None:
    for ws in await live.cloud.aws.amp.list_workspaces():
        if hpo.ours(ws, cluster) and (deleting or _status(ws) not in GONE):
            return ws
    return None


async def found(live: Live, settings: Shape, cluster: str) -> Shape | None:
    """The workspace the role and add-on name (with its ARN and endpoint), if it exists."""
    existing = settings.get("workspace_id")
    if existing:
        ws = await live.cloud.aws.amp.describe_workspace(existing)
        return ws if ws and _status(ws) not in GONE else None
    mine = await own_workspace(live, cluster)
    if mine is None:
        return None
    return await live.cloud.aws.amp.describe_workspace(mine["workspaceId"])


async def workspace_seen(live: Live, res: Resource, cluster: str) -> Seen:
    want = res.desired
    if "workspaceId" in want:   # an existing one: podplane's only if tagged for this cluster
        ws = await live.cloud.aws.amp.describe_workspace(want["workspaceId"])
        if ws is None or _status(ws) in GONE:
            return Seen(None)
        return Seen({"workspaceId": ws["workspaceId"]}, owned=hpo.ours(ws, cluster))
    ws = await own_workspace(live, cluster)
    if ws is None:
        return Seen(None)
    tags = ws.get("tags") or {}
    return Seen({"tags": {k: tags.get(k) for k in want["tags"]}}, owned=True)


async def check(live: Live, settings: Shape, cluster: str) -> None:
    """Refused before any change: an existing workspace that is not there or not ACTIVE, or
    podplane's own still there when switching to an existing one."""
    existing = settings.get("workspace_id")
    if not existing:
        return
    mine = await own_workspace(live, cluster)
    if mine is not None:
        raise Conflict(f"podplane's workspace {mine['workspaceId']} still exists.",
                       hint="Disable hyperpod-observability (deletes it), then enable it "
                            "with workspace_id.")
    ws = await live.cloud.aws.amp.describe_workspace(existing)
    if ws is None or _status(ws) != "ACTIVE":
        state = "does not exist" if ws is None else f"is {_status(ws)}"
        raise InvalidInput(f"The Prometheus workspace {existing} {state} in this account "
                           "and region.", field="workspace_id",
                           hint="Name an ACTIVE workspace, or leave workspace_id empty.")


async def workspace_change(ctx: StepContext, live: Live, cluster: str, verb: Verb,
                           res: Resource) -> None:
    amp = live.cloud.aws.amp
    if "workspaceId" in res.desired:
        if verb == "create":   # never ours to make: it was deleted after it was named
            raise CloudError(f"The Prometheus workspace {res.desired['workspaceId']} no "
                             "longer exists.", code="workspace_missing", retryable=False,
                             hint="Name another workspace_id, or leave it empty.")
        return   # podplane never changes or deletes a workspace it did not make
    if verb == "update":
        return   # only tags are compared, and a workspace without them is not found as ours
    if verb == "delete":
        mine = await _wait(ctx, live, cluster, lambda w: w is None or _status(w) != "CREATING",
                           deleting=True)
        if mine is not None and _status(mine) not in GONE:
            await amp.delete_workspace(mine["workspaceId"],
                                       client_token=ctx.client_token(res.key + " delete"))
        await _wait(ctx, live, cluster, lambda w: w is None, deleting=True)
        return
    if await own_workspace(live, cluster) is None:
        await amp.create_workspace(hpo.alias(cluster), dict(res.desired["tags"]),
                                   client_token=ctx.client_token(res.key))
    ws = await _wait(ctx, live, cluster,
                     lambda w: w is not None and _status(w) in ("ACTIVE", "CREATION_FAILED"))
    if ws is not None and _status(ws) == "CREATION_FAILED":
        raise CloudError("Amazon Managed Service for Prometheus could not create the "
                         "workspace.", code="workspace_failed", retryable=False,
                         hint="Disable hyperpod-observability, then enable it again.")


async def _wait(ctx: StepContext, live: Live, cluster: str,
                done: Callable[[Shape | None], bool], deleting: bool = False) -> Shape | None:
    for _ in range(int(DEADLINE_SECONDS / POLL_SECONDS)):
        ws = await own_workspace(live, cluster, deleting)
        if done(ws):
            return ws
        await ctx.sleep(POLL_SECONDS)
    raise CloudError("The Prometheus workspace did not settle in "
                     f"{DEADLINE_SECONDS / 60:.0f} minutes.", code="workspace_timeout",
                     retryable=True)
