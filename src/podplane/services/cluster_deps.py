"""Dependencies as reconcilable units: read what is installed, plan the difference, apply it.

EKS add-ons where AWS offers one; otherwise manifests podplane renders (domain.manifests),
applied server-side. A second run over a healthy cluster plans nothing and mutates nothing.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain import manifests
from podplane.domain.clusters import KUBERNETES_VERSION
from podplane.domain.dependencies import CORE_UNITS, Action, Observed, Unit, plan_units
from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext
from podplane.services.cloud_access import Cloud
from podplane.services.cluster_identity import bucket_policy, ensure_role, role_names

ADDON_POLL = 20.0
CSI_SERVICE_ACCOUNT = "s3-csi-driver-sa"
ADDON_DONE = ("ACTIVE", "CREATE_FAILED", "DEGRADED", "UPDATE_FAILED")


async def default_versions(cloud: Cloud) -> dict[str, str]:
    out = {}
    for info in await cloud.aws.eks.describe_addon_versions(
            kubernetes_version=KUBERNETES_VERSION):
        for version in info.get("addonVersions", []):
            compat = version.get("compatibilities") or [{}]
            if any(c.get("defaultVersion") for c in compat):
                out[info["addonName"]] = version["addonVersion"]
                break
    return out


async def observe(cloud: Cloud, eks_name: str,
                  kube: KubePort | None = None) -> dict[str, Observed]:
    """What is installed now, per unit (add-on status or the manifests' version annotation)."""
    seen: dict[str, Observed] = {}
    installed = set(await cloud.aws.eks.list_addons(eks_name))
    for unit in CORE_UNITS:
        if unit.kind == "eks-addon":
            if unit.name in installed:
                addon = await cloud.aws.eks.describe_addon(eks_name, unit.name) or {}
                seen[unit.name] = Observed(addon.get("addonVersion"),
                                           addon.get("status") in ("ACTIVE", "CREATING",
                                                                    "UPDATING"))
            continue
        kube = kube or await cloud.kube_for(eks_name)
        version = await _manifest_version(cloud, kube, unit)
        if version is not None:
            seen[unit.name] = Observed(version, True)
    return seen


def region_of(cloud: Cloud) -> str:
    """The cluster's region: regional images (health agent, EFA plugin) are pulled from it."""
    return str(cloud.aws.caller.region)


async def _manifest_version(cloud: Cloud, kube: KubePort, unit: Unit) -> str | None:
    rendered = manifests.for_unit(unit.name, unit.version or "0", region_of(cloud))
    last = rendered[-1]
    found = await kube.get(last["apiVersion"], last["kind"], last["metadata"]["name"],
                           last["metadata"].get("namespace"))
    if found is None:
        return None
    return str((found["metadata"].get("annotations") or {}).get(manifests.VERSION_ANNOTATION))


async def reconcile(ctx: StepContext, cloud: Cloud, eks_name: str) -> dict[str, Any]:
    await ctx.phase("observing")
    kube = await cloud.kube_for(eks_name)
    observed = await observe(cloud, eks_name, kube)
    actions = plan_units(CORE_UNITS, observed, await default_versions(cloud))
    await ctx.phase("applying", plan=[f"{a.verb} {a.unit.name}" for a in actions])
    for action in actions:
        await _apply(ctx, cloud, kube, eks_name, action)
    statuses = await _wait_addons(ctx, cloud, eks_name)
    return {"dependencies": statuses, "changed": [a.unit.name for a in actions]}


async def _apply(ctx: StepContext, cloud: Cloud, kube: KubePort, eks_name: str,
                 action: Action) -> None:
    unit = action.unit
    if unit.kind == "manifest":
        for obj in manifests.for_unit(unit.name, unit.version or "0", region_of(cloud)):
            await kube.apply(obj, force=True)
        await ctx.note(f"{action.verb} {unit.name} {unit.version}")
        return
    eks = cloud.aws.eks
    if action.verb == "install":
        await eks.create_addon(eks_name, unit.name, unit.version,
                               client_token=ctx.client_token(unit.name),
                               resolveConflicts="OVERWRITE")
    elif action.verb == "repair" and await _failed(cloud, eks_name, unit.name):
        await eks.delete_addon(eks_name, unit.name)
        while await eks.describe_addon(eks_name, unit.name) is not None:
            await ctx.sleep(ADDON_POLL)
        await eks.create_addon(eks_name, unit.name, unit.version,
                               client_token=ctx.client_token(f"{unit.name}-repair"),
                               resolveConflicts="OVERWRITE")
    else:
        version = unit.version or (await default_versions(cloud)).get(unit.name)
        await eks.update_addon(eks_name, unit.name, addonVersion=version,
                               resolveConflicts="OVERWRITE")
    await ctx.note(f"{action.verb} add-on {unit.name}")


async def _failed(cloud: Cloud, eks_name: str, addon: str) -> bool:
    found = await cloud.aws.eks.describe_addon(eks_name, addon) or {}
    return found.get("status") in ("CREATE_FAILED", "DEGRADED")


async def _wait_addons(ctx: StepContext, cloud: Cloud, eks_name: str) -> dict[str, str]:
    names = [u.name for u in CORE_UNITS if u.kind == "eks-addon"]
    while True:
        statuses = {}
        for name in names:
            addon = await cloud.aws.eks.describe_addon(eks_name, name) or {}
            statuses[name] = str(addon.get("status", "MISSING"))
        if all(s in ADDON_DONE for s in statuses.values()):
            break
        await ctx.sleep(ADDON_POLL)
    bad = {n: s for n, s in statuses.items() if s != "ACTIVE"}
    if bad:
        names_text = ", ".join(f"{n} ({s})" for n, s in bad.items())
        raise CloudError(f"EKS add-ons did not become ACTIVE: {names_text}.",
                         code="addon_failed", retryable=False,
                         hint="See the add-on's health issues (aws eks describe-addon); "
                         "retrying the step deletes and reinstalls a failed add-on.")
    return statuses


async def ensure_storage(ctx: StepContext, cloud: Cloud, eks_name: str, bucket: str,
                         region: str) -> dict[str, Any]:
    """The shared bucket mounted through Mountpoint for S3 CSI: the driver's pod identity
    (a role allowed on this bucket only), a static PV and its claim."""
    await ctx.phase("identity", bucket=bucket)
    role = await ensure_role(cloud.aws.caller, eks_name, role_names(eks_name)["s3csi"],
                             "pods.eks.amazonaws.com", inline=bucket_policy(bucket))
    associations = await cloud.aws.eks.list_pod_identity_associations(eks_name)
    if not any(a.get("serviceAccount") == CSI_SERVICE_ACCOUNT for a in associations):
        await cloud.aws.eks.create_pod_identity_association(
            eks_name, "kube-system", CSI_SERVICE_ACCOUNT, role,
            client_token=ctx.client_token("s3csi"))
    await ctx.phase("applying")
    kube = await cloud.kube_for(eks_name)
    for obj in manifests.s3_volume(bucket, region):
        await kube.apply(obj, force=True)
    claim = await kube.get("v1", "PersistentVolumeClaim", "s3-claim", "default")
    phase = ((claim or {}).get("status") or {}).get("phase")
    return {"bucket": bucket, "claim": "default/s3-claim", "claim_phase": phase,
            "csi_role": role}
