"""Carrying out one planned action on one resource (create, update or delete).

Every call is safe to repeat: the workflow re-observes before acting, so a resumed step
redoes only what is still missing (create of an existing role is skipped, a delete of what is
gone is a no-op).
"""

from __future__ import annotations

import json
from typing import Any

from podplane.domain.errors import CloudError, NotFound
from podplane.domain.features.checkpointing import POLICY_NAME
from podplane.domain.features.model import Resource
from podplane.domain.features.render import ClusterFacts, policy_text
from podplane.domain.reconcile import Verb
from podplane.ops.context import StepContext
from podplane.services.features import fsx, mlflow
from podplane.services.features import hyperpod_observability as hpo
from podplane.services.features.addons import addon_change
from podplane.services.features.inference_operator import provider_change
from podplane.services.features.live import Live
from podplane.services.iam_retry import while_iam_propagates

Shape = dict[str, Any]
POLL_SECONDS = 30.0
SETTING_DEADLINE = 30 * 60.0
KIND_POLL = 10.0
KIND_DEADLINE = 10 * 60.0


async def carry_out(ctx: StepContext, live: Live, facts: ClusterFacts, verb: Verb,
                    res: Resource) -> None:
    if res.kind == "kube":
        await _kube(ctx, live, verb, res)
    elif res.kind == "iam-role":
        await _role(live, verb, res)
    elif res.kind == "pod-identity":
        await _association(ctx, live, facts, verb, res)
    elif res.kind == "eks-addon":
        await addon_change(ctx, live, verb, res)
    elif res.kind == "fsx-filesystem":
        await fsx.file_system_change(ctx, live, facts, verb, res)
    elif res.kind == "mlflow-server":
        await mlflow.server_change(ctx, live, verb, res)
    elif res.kind == "sg-ingress":
        await fsx.rule_change(live, verb, res)
    elif res.kind == "oidc-provider":
        await provider_change(live, verb, res)
    elif res.kind == "amp-workspace":
        await hpo.workspace_change(ctx, live, facts.name, verb, res)
    else:
        await _setting(ctx, live, facts, res)
    await ctx.note(f"{verb} {res.key}")


async def _kube(ctx: StepContext, live: Live, verb: Verb, res: Resource) -> None:
    kube = await live.kube()
    obj = res.desired
    if await fsx.volume_change(live, verb, res):
        return
    if verb == "delete":
        meta = obj["metadata"]
        await kube.delete(obj["apiVersion"], obj["kind"], meta["name"],
                          namespace=meta.get("namespace"))
        return
    for _ in range(int(KIND_DEADLINE / KIND_POLL)):
        try:
            await kube.apply(obj, force=True)
            return
        except NotFound:
            # a kind the service serves once a setting is on (HyperPod installs the
            # Karpenter kinds when AutoScaling is enabled): wait for it to be served
            await ctx.sleep(KIND_POLL)
    raise CloudError(f"The cluster does not serve {obj['apiVersion']} {obj['kind']}.",
                     code="kind_not_served", retryable=False,
                     hint="Check that the setting that brings this kind is on, then retry.")


async def _role(live: Live, verb: Verb, res: Resource) -> None:
    iam = live.cloud.aws.iam
    want = res.desired
    name = want["name"]
    if verb == "delete":
        for policy in await iam.list_role_policies(name):
            await iam.delete_role_policy(name, policy)
        for attached in await iam.list_attached_role_policies(name):
            await iam.detach_role_policy(name, attached["PolicyArn"])
        await iam.delete_role(name)
        return
    if await iam.get_role(name) is None:
        await iam.create_role(name, json.dumps(want["trust"]),
                              [{"Key": k, "Value": v} for k, v in want["tags"].items()])
    if "policy" in want:
        await iam.put_role_policy(name, POLICY_NAME, policy_text(want["policy"]))
    for arn in want.get("managed", []):  # attaching an attached policy changes nothing (IAM)
        await iam.attach_role_policy(name, arn)


async def _association(ctx: StepContext, live: Live, facts: ClusterFacts, verb: Verb,
                       res: Resource) -> None:
    eks = live.cloud.aws.eks
    want = res.desired
    if verb == "delete":
        seen = await live.seen(res)
        if seen.live is not None:
            await eks.delete_pod_identity_association(live.eks, seen.live["associationId"])
        return
    arn = want.get("roleArn") or facts.role_arn("ckpt")
    await while_iam_propagates(ctx, arn, lambda: eks.create_pod_identity_association(
        live.eks, want["namespace"], want["serviceAccount"], arn,
        client_token=ctx.client_token(res.key)))


async def _setting(ctx: StepContext, live: Live, facts: ClusterFacts, res: Resource) -> None:
    """One UpdateCluster with only the setting (SageMaker API UpdateCluster: InstanceGroups is
    optional), once the cluster is InService; then wait for it to be InService again."""
    hp = live.cloud.aws.hyperpod
    (field, value), = res.desired.items()
    await wait_in_service(ctx, live)
    params: Shape = {"ClusterName": live.hyperpod, field: value}
    if field == "AutoScaling" and value.get("Mode") == "Enable":
        # the role HyperPod assumes to scale; it cannot change while autoscaling is on
        # (SageMaker API UpdateCluster, ClusterRole)
        params["ClusterRole"] = facts.role_arn("karpenter")
        await while_iam_propagates(ctx, params["ClusterRole"], lambda: hp.update_cluster(params))
    else:
        await hp.update_cluster(params)
    live.forget()
    await wait_in_service(ctx, live)


async def wait_in_service(ctx: StepContext, live: Live) -> Shape:
    for _ in range(int(SETTING_DEADLINE / POLL_SECONDS)):
        described = await live.described(fresh=True)
        status = described.get("ClusterStatus")
        if status == "InService":
            return described
        if status in ("Failed", "Deleting", "RollingBack"):
            break
        await ctx.sleep(POLL_SECONDS)
    raise CloudError(f"The HyperPod cluster {live.hyperpod} is not InService "
                     f"({(await live.described()).get('ClusterStatus')}).",
                     code="cluster_not_in_service", retryable=False,
                     hint="HyperPod settings change only while the cluster is InService; "
                     "retry the step when it is.")
