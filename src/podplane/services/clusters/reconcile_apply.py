"""Apply one reconcile step to a cluster, by the kind of its unit.

Add-ons and manifests are repaired as the create path installs them (services.clusters
.dependencies); roles through identity.ensure_role (attach what is missing); associations
with CreatePodIdentityAssociation (EKS API reference; retried while the role propagates);
the shared volume by applying its rendering again. Cluster reconcile never deletes.
"""

from __future__ import annotations

from podplane.cloud.ports_kube import KubePort
from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS, VERB_FOR_CAUSE, Action
from podplane.domain.errors import CloudError
from podplane.domain.reconcile import Step
from podplane.ops.context import StepContext
from podplane.services.cloud_access import Cloud
from podplane.services.clusters import dependencies as cluster_deps
from podplane.services.clusters.addon_identity import addon_role_name, ensure_addon_role
from podplane.services.clusters.reconcile_units import (
    ASSOCIATION_KIND,
    ROLE_KIND,
    STORAGE_KIND,
    Context,
    association_key,
    identities,
    role_key,
)
from podplane.services.iam_retry import while_iam_propagates


async def apply_step(ctx: StepContext, cloud: Cloud, kube: KubePort, target: Context,
                     step: Step) -> None:
    if step.verb == "delete":  # cluster units are never pruned; the core would not plan it
        raise CloudError(f"Reconcile does not delete {step.key}.", code="reconcile_refused")
    if step.kind in ("eks-addon", "manifest"):
        unit = next(u for u in CORE_UNITS if u.name == step.key)
        await cluster_deps.wait_active(ctx, cloud, target.eks_name,
                                       cluster_deps.addons_before(unit))
        action = Action(unit, VERB_FOR_CAUSE[step.cause], step.reason)
        await cluster_deps.apply_action(ctx, cloud, kube, target.eks_name, action,
                                        target.bucket)
        if unit.kind == "eks-addon":
            await cluster_deps.wait_active(ctx, cloud, target.eks_name, [unit.name])
    elif step.kind == ROLE_KIND:
        identity = next(i for i in identities() if role_key(i) == step.key)
        await ensure_addon_role(cloud, target.eks_name, identity, target.bucket)
        await ctx.note(f"repaired role {step.key}")
    elif step.kind == ASSOCIATION_KIND:
        await _associate(ctx, cloud, target, step)
    elif step.kind == STORAGE_KIND and target.bucket:
        for obj in manifests.s3_volume(target.bucket, target.region):
            await kube.apply(obj, force=True)
        await ctx.note("applied the shared volume and its claim")


async def _associate(ctx: StepContext, cloud: Cloud, target: Context, step: Step) -> None:
    identity = next(i for i in identities() if association_key(i) == step.key)
    name = addon_role_name(target.eks_name, identity.role, target.region)
    role = await cloud.aws.iam.get_role(name)
    if role is None:  # its role unit comes first in the plan; gone again since then
        raise CloudError(f"Role {name} is missing, so {step.key} cannot be made.",
                         code="role_missing", hint="Retry the reconcile.")
    arn = str(role["Arn"])
    await while_iam_propagates(ctx, arn, lambda: cloud.aws.eks.create_pod_identity_association(
        target.eks_name, identity.namespace, identity.service_account, arn,
        client_token=ctx.client_token(step.key)))
    await ctx.note(f"created {step.key}")
