"""An endpoint's autoscaling on a cluster: the KEDA ScaledObject podplane owns for it
(domain/inference/autoscaling.py says what it is).

Refusals change nothing: autoscaling needs the `keda` feature (409 with a hint); a
ScaledObject or HPA podplane did not write that holds the endpoint's name or scales its
Deployment is never overwritten (409: two autoscalers on one Deployment fight, KEDA docs
"Scaling Deployments" / Kubernetes HPA docs). A manual scale of an autoscaled endpoint is
refused (409): the HPA would undo it at its next sync; the bounds change through an update.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.effects import Effect
from podplane.domain.errors import Conflict, InvalidInput, NotFound
from podplane.domain.features.catalog import KEDA
from podplane.domain.inference import autoscaling as asc
from podplane.domain.inference import views
from podplane.domain.inference.render import NAMESPACE, gpus_per_pod
from podplane.domain.inference.requests import EndpointUpdate
from podplane.ops.context import StepContext
from podplane.services.context import Ctx
from podplane.services.features.state import desired_of
from podplane.services.inference import cluster as ic
from podplane.services.inference.cluster import is_ours
from podplane.services.mutation import Outcome, start
from podplane.services.registry import service
from podplane.services.scope import kube_of

Shape = dict[str, Any]
AUTOSCALE = "endpoint.autoscale"
HPA = ("autoscaling/v2", "HorizontalPodAutoscaler")


class AutoscalerConflict(Conflict):
    code = "autoscaler_conflict"


async def require_keda(ctx: Ctx, cluster: str) -> None:
    if not (await desired_of(ctx.app, cluster))[KEDA].enabled:
        raise Conflict(f"Cluster {cluster!r} has no KEDA: autoscaling needs it.",
                       hint="Enable the keda feature (feature_set), or leave autoscaling "
                       "out and scale by hand.")


async def allowed(ctx: Ctx, kube: KubePort, cluster: str, body: Shape) -> None:
    """min <= max; for a self-managed endpoint also KEDA on and no autoscaler of anyone else
    (refusals). A managed endpoint's autoscaling is the operator's: rendered into its config's
    autoScalingSpec (domain/inference/managed_options.py), which checks what it needs."""
    asc.check(body["autoscaling"])
    if body.get("kind") == "managed":
        return
    await require_keda(ctx, cluster)
    await refuse_foreign(kube, cluster, body["name"])


# Started by endpoint.update when it carries `autoscaling` alone (its audit row covers this).
@service(Effect.MUTATE, AUTOSCALE,
         target=lambda cluster, name, *_a, **_k: f"cluster/{cluster}/endpoint/{name}")
async def autoscale_endpoint(ctx: Ctx, cluster: str, name: str, update: EndpointUpdate,
                             key: str | None = None) -> Outcome:
    """Set, change or stop ("off") autoscaling: one ScaledObject applied or deleted."""
    if update.changes():
        raise InvalidInput("Send autoscaling alone: it is not part of a rollout.",
                           field="autoscaling", hint="Update the pod template separately.")
    ref, kube = await kube_of(ctx, cluster)
    dep, svc = await ic.find(kube, cluster, name)
    before = await view(kube, name)
    plan: Shape = {"endpoint": name, "autoscaling": {"from": before, "to": None}}
    params: Shape = {"cluster_ref": ref.params(), "endpoint": name, "manifest": None}
    if update.autoscaling == "off" or update.autoscaling is None:
        if before is None:
            return Outcome(False, plan, dry_run=update.dry_run)
    else:
        wanted = {**views.request_of(dep, svc), "autoscaling": asdict(update.autoscaling)}
        await allowed(ctx, kube, cluster, wanted)
        params["manifest"] = plan["autoscaling"]["to"] = asc.scaled_object(wanted)
        if asc.already(await ours(kube, name), params["manifest"]):
            return Outcome(False, plan, dry_run=update.dry_run)
        if wanted.get("instance_group") and (warnings := await ic.room_warning(
                kube, wanted["instance_group"], gpus_per_pod(wanted),
                update.autoscaling.max_replicas - int(wanted.get("replicas") or 0))):
            plan["warnings"] = warnings
    if update.dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, AUTOSCALE, f"cluster/{cluster}/endpoint/{name}", params, key, plan)


async def _scaled_objects(kube: KubePort) -> list[Shape]:
    try:
        return await kube.list(asc.API_VERSION, asc.KIND, namespace=NAMESPACE)
    except NotFound:   # KEDA's CRDs are not installed
        return []


async def ours(kube: KubePort, name: str) -> Shape | None:
    with contextlib.suppress(NotFound):
        so = await kube.get(asc.API_VERSION, asc.KIND, name, NAMESPACE)
        return so if is_ours(so, name) else None
    return None


def _keda_made(hpa: Shape, so: Shape | None) -> bool:
    """The HPA KEDA made for podplane's ScaledObject (owned by it)."""
    uid = (so or {}).get("metadata", {}).get("uid")
    refs = hpa["metadata"].get("ownerReferences") or []
    return uid is not None and any(r.get("uid") == uid for r in refs)


async def refuse_foreign(kube: KubePort, cluster: str, name: str) -> None:
    """409 when an autoscaler podplane did not write holds the name or scales `name`."""
    mine = await ours(kube, name)
    for so in await _scaled_objects(kube):
        taken = so["metadata"]["name"] == name or asc.targets(so, name)
        if taken and not is_ours(so, name):
            raise AutoscalerConflict(
                f"ScaledObject {so['metadata']['name']!r} on {cluster!r} was not made by "
                f"podplane and holds or scales {name!r}.",
                hint="Delete it (kubectl) or choose another endpoint name; podplane never "
                "overwrites it.")
    for hpa in await kube.list(*HPA, namespace=NAMESPACE):
        if asc.targets(hpa, name) and not _keda_made(hpa, mine):
            raise AutoscalerConflict(
                f"HorizontalPodAutoscaler {hpa['metadata']['name']!r} on {cluster!r} already "
                f"scales {name!r}.", hint="Delete that HPA first, or scale by hand.")


async def refuse_manual_scale(kube: KubePort, name: str) -> None:
    if await ours(kube, name) is not None:
        raise Conflict(f"Endpoint {name!r} is autoscaled: KEDA sets its replicas.",
                       hint="Change autoscaling.min_replicas/max_replicas with endpoint "
                       "update, or set autoscaling to \"off\" first.")


async def view(kube: KubePort, name: str) -> Shape | None:
    so = await ours(kube, name)
    if so is None:
        return None
    hpa_name = (so.get("status") or {}).get("hpaName") or f"{asc.HPA_PREFIX}{name}"
    hpa = await kube.get(*HPA, hpa_name, NAMESPACE)
    return asc.summary(so, hpa if hpa and _keda_made(hpa, so) else None)


async def delete_ours(kube: KubePort, name: str) -> bool:
    """Deletes podplane's ScaledObject of `name` (KEDA's HPA goes with it: owner reference);
    nothing of anyone else."""
    if await ours(kube, name) is None:
        return False
    with contextlib.suppress(NotFound):
        await kube.delete(asc.API_VERSION, asc.KIND, name, namespace=NAMESPACE,
                          propagation="Background")
    return True


async def apply_step(kube: KubePort, ctx: StepContext) -> Shape:
    """endpoint.autoscale `apply`: the ScaledObject as planned, or none ("off")."""
    name = ctx.params["endpoint"]
    await ctx.phase("applying")
    manifest = ctx.params.get("manifest")
    if manifest is None:
        gone = await delete_ours(kube, name)
        ctx.crash_point("after_call")
        return {"deleted": name if gone else None}
    applied = await kube.apply(manifest, force=True)
    ctx.crash_point("after_call")
    return {"applied": f"{applied['kind']}/{applied['metadata']['name']}"}
