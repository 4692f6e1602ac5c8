"""Creating and deleting a feature's EKS add-on, waiting for EKS to finish each.

EKS API: CreateAddon answers at once with status CREATING; the add-on becomes ACTIVE, or
DEGRADED / CREATE_FAILED with `health.issues` naming why. DeleteAddon answers DELETING and the
add-on is gone (DescribeAddon: ResourceNotFoundException) when done. A create while the same
add-on is still DELETING is refused (ResourceInUseException), so a re-enable waits first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podplane.domain.errors import CloudError
from podplane.domain.features.hyperpod_observability import same_configuration
from podplane.domain.features.model import Resource
from podplane.domain.reconcile import Verb
from podplane.ops.context import StepContext
from podplane.services.features.live import Live

Shape = dict[str, Any]
POLL_SECONDS = 15.0
DEADLINE_SECONDS = 30 * 60.0
SETTLED = ("ACTIVE", "DEGRADED", "CREATE_FAILED", "UPDATE_FAILED", "DELETE_FAILED")


async def addon_change(ctx: StepContext, live: Live, verb: Verb, res: Resource) -> None:
    eks = live.cloud.aws.eks
    name = res.desired["addonName"]
    if verb == "delete":
        if await eks.describe_addon(live.eks, name) is not None:
            await eks.delete_addon(live.eks, name)
        await _wait(ctx, live, name, lambda found: found is None)
        return
    await _wait(ctx, live, name, lambda f: f is None or f["status"] != "DELETING")
    config = {k: res.desired[k] for k in ("configurationValues",) if k in res.desired}
    now = await eks.describe_addon(live.eks, name)
    if now is None:
        await eks.create_addon(live.eks, name, client_token=ctx.client_token(res.key),
                               tags=res.desired["tags"], **config)
    elif config and same_configuration(now.get("configurationValues")) != \
            config["configurationValues"]:
        # EKS UpdateAddon: one update at a time, so wait for the add-on to settle first
        await _wait(ctx, live, name, lambda f: f is not None and f["status"] in SETTLED)
        await eks.update_addon(live.eks, name, client_token=ctx.client_token(res.key + " config"),
                               resolveConflicts="OVERWRITE", **config)
        await _wait(ctx, live, name, lambda f: f is not None and f["status"] != "UPDATING")
    found = await _wait(ctx, live, name, lambda f: f is not None and f["status"] in SETTLED)
    if found is not None and found["status"] != "ACTIVE":
        issues = "; ".join(f"{i.get('code')}: {i.get('message')}"
                           for i in (found.get("health") or {}).get("issues") or [])
        raise CloudError(f"EKS add-on {name} is {found['status']}"
                         + (f" ({issues})" if issues else "") + ".",
                         code="addon_unhealthy", retryable=False,
                         hint="Fix what the health issue names (often: no Ready node for its "
                              "pods yet), then retry the step.")


async def _wait(ctx: StepContext, live: Live, name: str,
                done: Callable[[Shape | None], bool]) -> Shape | None:
    for _ in range(int(DEADLINE_SECONDS / POLL_SECONDS)):
        found = await live.cloud.aws.eks.describe_addon(live.eks, name)
        if done(found):
            return found
        await ctx.sleep(POLL_SECONDS)
    raise CloudError(f"EKS add-on {name} did not settle in {DEADLINE_SECONDS / 60:.0f} "
                     "minutes.", code="addon_timeout", retryable=True)
