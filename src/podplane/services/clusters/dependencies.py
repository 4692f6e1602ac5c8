"""Dependencies as reconcilable units: read what is installed, plan the difference, apply it.

EKS add-ons where AWS offers one; otherwise manifests podplane renders (domain.manifests),
applied server-side. A second run over a healthy cluster plans nothing and mutates nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain import manifests
from podplane.domain.clusters import KUBERNETES_VERSION
from podplane.domain.dependencies import (
    CORE_UNITS,
    CSI_IDENTITY,
    Action,
    Observed,
    Stage,
    Unit,
    plan_units,
    units_for,
)
from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.addon_identity import associations_to_pass, ensure_addon_role
from podplane.services.iam_retry import while_iam_propagates

FAILED = ("CREATE_FAILED", "UPDATE_FAILED", "DELETE_FAILED")

ADDON_POLL = 20.0
ADDON_DEADLINE = 30 * 60.0   # virtual seconds an add-on may take to become ACTIVE
NODES_DEADLINE = 45 * 60.0   # virtual seconds to wait for the first Ready node
CLUSTER_LABEL = "sagemaker.amazonaws.com/cluster-name"


async def default_versions(cloud: Cloud, units: tuple[Unit, ...] = CORE_UNITS) -> dict[str, str]:
    """The default version of each add-on we install, asked add-on by add-on (all pages; the
    questions go out together)."""
    addons = [u.name for u in units if u.kind == "eks-addon"]
    answers = await asyncio.gather(*(cloud.aws.eks.describe_addon_versions(
        addon_name=name, kubernetes_version=KUBERNETES_VERSION) for name in addons))
    out = {}
    for infos in answers:
        for info in infos:
            for version in info.get("addonVersions", []):
                compat = version.get("compatibilities") or [{}]
                if any(c.get("defaultVersion") for c in compat):
                    out[info["addonName"]] = version["addonVersion"]
                    break
    return out


async def observe(cloud: Cloud, eks_name: str, kube: KubePort | None = None,
                  units: tuple[Unit, ...] = CORE_UNITS) -> dict[str, Observed]:
    """What is installed now, per unit (add-on status or the manifests' version annotation).
    DEGRADED counts as installed and healthy enough to leave alone: it is EKS's word for
    "waiting for replicas" and heals when nodes come (a delete + recreate would not help)."""
    seen: dict[str, Observed] = {}
    installed = set(await cloud.aws.eks.list_addons(eks_name))
    for unit in units:
        if unit.kind == "eks-addon":
            if unit.name in installed:
                addon = await cloud.aws.eks.describe_addon(eks_name, unit.name) or {}
                seen[unit.name] = Observed(addon.get("addonVersion"),
                                           addon.get("status") not in FAILED)
            continue
        kube = kube or await cloud.kube_for(eks_name)
        version = await _manifest_version(cloud, kube, unit)
        if version is not None:
            seen[unit.name] = Observed(version, True)
    return seen


def region_of(cloud: Cloud) -> str:
    """The cluster's region: regional images (health agent, EFA plugin) are pulled from it."""
    return cloud.aws.region


async def _manifest_version(cloud: Cloud, kube: KubePort, unit: Unit) -> str | None:
    rendered = manifests.for_unit(unit.name, unit.version or "0", region_of(cloud))
    last = rendered[-1]
    found = await kube.get(last["apiVersion"], last["kind"], last["metadata"]["name"],
                           last["metadata"].get("namespace"))
    if found is None:
        return None
    return str((found["metadata"].get("annotations") or {}).get(manifests.VERSION_ANNOTATION))


async def reconcile(ctx: StepContext, cloud: Cloud, eks_name: str, stage: Stage = "cluster",
                    bucket: str | None = None) -> dict[str, Any]:
    """Install and repair the units of one stage, each after the add-ons it needs are ACTIVE,
    then wait (with a deadline) until every add-on of the stage is ACTIVE."""
    units = units_for(stage)
    await ctx.phase("observing", stage=stage)
    kube = await cloud.kube_for(eks_name)
    if stage == "nodes":
        await wait_ready_node(ctx, kube, eks_name)
    observed = await observe(cloud, eks_name, kube, units)
    actions = plan_units(units, observed, await default_versions(cloud, units))
    await ctx.phase("applying", plan=[f"{a.verb} {a.unit.name}" for a in actions])
    for action in actions:
        await wait_active(ctx, cloud, eks_name, addons_before(action.unit))
        await apply_action(ctx, cloud, kube, eks_name, action, bucket)
    statuses = await wait_active(ctx, cloud, eks_name,
                                 [u.name for u in units if u.kind == "eks-addon"])
    return {"dependencies": statuses, "changed": [a.unit.name for a in actions]}


def addons_before(unit: Unit) -> list[str]:
    kinds = {u.name: u.kind for u in CORE_UNITS}
    return [name for name in unit.after if kinds.get(name) == "eks-addon"]


async def apply_action(ctx: StepContext, cloud: Cloud, kube: KubePort, eks_name: str,
                 action: Action, bucket: str | None) -> None:
    unit = action.unit
    if unit.kind == "manifest":
        for obj in manifests.for_unit(unit.name, unit.version or "0", region_of(cloud)):
            await kube.apply(obj, force=True)
        await ctx.note(f"{action.verb} {unit.name} {unit.version}")
        return
    eks = cloud.aws.eks
    if action.verb == "install":
        await _create_addon(ctx, cloud, eks_name, unit, bucket, unit.name)
    elif action.verb == "repair":
        # only CREATE_FAILED is repaired this way; DEGRADED waits (see observe)
        await eks.delete_addon(eks_name, unit.name)
        for _ in range(int(ADDON_DEADLINE / ADDON_POLL)):
            if await eks.describe_addon(eks_name, unit.name) is None:
                break
            await ctx.sleep(ADDON_POLL)
        await _create_addon(ctx, cloud, eks_name, unit, bucket, f"{unit.name}-repair")
    else:
        version = unit.version or (await default_versions(cloud, (unit,))).get(unit.name)
        await eks.update_addon(eks_name, unit.name, addonVersion=version,
                               resolveConflicts="OVERWRITE")
    await ctx.note(f"{action.verb} add-on {unit.name}")


async def _create_addon(ctx: StepContext, cloud: Cloud, eks_name: str, unit: Unit,
                        bucket: str | None, token_key: str) -> None:
    identity = await associations_to_pass(cloud, eks_name, unit.identity, bucket)

    async def create() -> Any:
        return await cloud.aws.eks.create_addon(
            eks_name, unit.name, unit.version, client_token=ctx.client_token(token_key),
            resolveConflicts="OVERWRITE",
            **({"podIdentityAssociations": identity} if identity else {}))

    if not identity:
        await create()
        return
    # EKS checks the association's role at CreateAddon: a role made moments ago may not have
    # reached EKS yet (IAM eventual consistency), so retry as for CreatePodIdentityAssociation.
    await while_iam_propagates(ctx, identity[0]["roleArn"], create)


async def wait_ready_node(ctx: StepContext, kube: KubePort, eks_name: str) -> int:
    """Add-ons with Deployments need a Ready node for their replicas; wait for the first one."""
    for _ in range(int(NODES_DEADLINE / ADDON_POLL)):
        nodes = await kube.list("v1", "Node", labels={CLUSTER_LABEL: eks_name})
        ready = sum(1 for n in nodes if _node_ready(n))
        if ready:
            return ready
        await ctx.sleep(ADDON_POLL)
    raise CloudError(f"No node of {eks_name} became Ready in {int(NODES_DEADLINE / 60)} "
                     "minutes, so add-ons that need nodes cannot start.", code="nodes_not_ready",
                     retryable=False,
                     hint="Check the HyperPod instances (aws sagemaker list-cluster-nodes) and "
                     "kubectl get nodes, then retry this step.")


def _node_ready(node: dict[str, Any]) -> bool:
    conds = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


async def wait_active(ctx: StepContext, cloud: Cloud, eks_name: str,
                      names: list[str]) -> dict[str, str]:
    """Wait until every named add-on is ACTIVE; fail at the deadline, or at once on a failed
    state, naming the add-on and the health issue EKS reports."""
    addons: dict[str, dict[str, Any]] = {}
    for _ in range(int(ADDON_DEADLINE / ADDON_POLL) + 1):
        addons = {n: await cloud.aws.eks.describe_addon(eks_name, n) or {} for n in names}
        if any(a.get("status") in FAILED for a in addons.values()):
            break
        if all(a.get("status") == "ACTIVE" for a in addons.values()):
            return {n: "ACTIVE" for n in names}
        await ctx.sleep(ADDON_POLL)
    raise addon_error(addons)


def addon_error(addons: dict[str, dict[str, Any]]) -> CloudError:
    bad = {n: a for n, a in addons.items() if a.get("status") != "ACTIVE"}
    parts = [f"{n} is {a.get('status', 'MISSING')}{_issues(a)}" for n, a in bad.items()]
    failed = any(a.get("status") in FAILED for a in bad.values())
    return CloudError(
        "EKS add-ons did not become ACTIVE: " + "; ".join(parts) + ".",
        code="addon_failed" if failed else "addon_timeout", retryable=False,
        hint=("Retrying the step deletes and recreates a failed add-on. " if failed else
              "InsufficientNumberOfReplicas means its pods have no Ready node to run on. ")
        + "See aws eks describe-addon --cluster-name <cluster> --addon-name <name>.")


def _issues(addon: dict[str, Any]) -> str:
    issues = (addon.get("health") or {}).get("issues") or []
    return "".join(f" ({i.get('code')}: {i.get('message')})" for i in issues)


async def ensure_storage(ctx: StepContext, cloud: Cloud, eks_name: str, bucket: str,
                         region: str) -> dict[str, Any]:
    """The shared bucket mounted through Mountpoint for S3 CSI: the driver's role (this bucket
    only; its association was passed at CreateAddon), a static PV and its claim."""
    await ctx.phase("identity", bucket=bucket)
    role = await ensure_addon_role(cloud, eks_name, CSI_IDENTITY, bucket)
    # An add-on installed outside podplane may lack the association: add it (its node pods
    # get credentials only once restarted, which the mount test then reports).
    csi = CSI_IDENTITY
    if await associations_to_pass(cloud, eks_name, csi, bucket):
        await while_iam_propagates(ctx, role, lambda: cloud.aws.eks.create_pod_identity_association(
            eks_name, csi.namespace, csi.service_account, role,
            client_token=ctx.client_token("s3csi")))
    await ctx.phase("applying")
    kube = await cloud.kube_for(eks_name)
    for obj in manifests.s3_volume(bucket, region):
        await kube.apply(obj, force=True)
    claim = await kube.get("v1", "PersistentVolumeClaim", "s3-claim", "default")
    phase = ((claim or {}).get("status") or {}).get("phase")
    return {"bucket": bucket, "claim": "default/s3-claim", "claim_phase": phase,
            "csi_role": role}
