"""Managed endpoints (`kind: managed`): an InferenceEndpointConfig the HyperPod inference
operator serves (domain/inference/managed.py). Create refuses while the inference-operator
feature is off (409, nothing created); the operation applies the config and waits on the
operator's `status.state`; invoke and delete find the endpoint through the config podplane
labelled and the Deployment and Service the operator made for it (owned by the config)."""

from __future__ import annotations

import contextlib
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.catalog import lookup
from podplane.domain.clusters import shared_bucket
from podplane.domain.errors import CloudError, InvalidInput, NotFound
from podplane.domain.features import fsx
from podplane.domain.features.catalog import FSX_LUSTRE, INFERENCE_OPERATOR
from podplane.domain.inference import managed
from podplane.domain.inference import managed_sources as sources
from podplane.domain.inference.errors import EndpointExists
from podplane.domain.inference.managed_views import JUMPSTART_KIND
from podplane.ops.context import StepContext
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.clusters.state import facts_of
from podplane.services.context import Ctx
from podplane.services.features.state import desired_of
from podplane.services.inference import managed_options
from podplane.services.inference.cluster import OWNED, is_ours

Shape = dict[str, Any]
NAMESPACE = "default"
KINDS = (managed.KIND, JUMPSTART_KIND)
POLL_SECONDS = 10.0
READY_SECONDS = 1800.0


async def render_for(ctx: Ctx, ref: scope.ClusterRef, kube: KubePort, cluster: str,
                     body: Shape) -> Shape:
    """The config for a managed create; refuses (changing nothing) what cannot be served."""
    wants = await desired_of(ctx.app, cluster)
    managed.require_operator(wants[INFERENCE_OPERATOR].enabled, cluster)
    cloud = cloud_of(ctx.app)
    group = scope.chosen_group(await scope.describe(cloud.aws.hyperpod, ref), cluster,
                            body["instance_group"])
    instance_type = lookup(str(group.get("InstanceType", "")))
    if instance_type is None:
        raise InvalidInput(f"Unknown instance type {group.get('InstanceType')!r}.",
                           field="instance_group")
    lb = body["exposure"] == "load_balancer"
    if sources.is_jumpstart(body["model"]):
        manifest = sources.render_jumpstart(body["name"], body["model"], instance_type,
                                            replicas=body["replicas"], load_balancer=lb,
                                            labels=managed.labels(body["name"]),
                                            accept_eula=bool(body.get("accept_eula")))
    else:
        manifest = managed.render(body["name"], body["model"], await bucket_of(ctx, cluster),
                                  cloud.aws.region, instance_type,
                                  tensor_parallel=body["tensor_parallel"],
                                  replicas=body["replicas"], image=body["image"],
                                  load_balancer=lb,
                                  fsx=await fsx_source(ctx, kube, cluster, body["model"]))
    manifest["spec"].update(await managed_options.spec_fields(ctx, cluster, body))
    if await kube.get(managed.API_VERSION, manifest["kind"], body["name"], NAMESPACE):
        raise EndpointExists(f"An InferenceEndpointConfig named {body['name']!r} already "
                             f"exists on {cluster!r}.", hint="Choose another name.")
    return manifest


async def fsx_source(ctx: Ctx, kube: KubePort, cluster: str, model: str) -> Shape | None:
    """The `modelSourceConfig` of an `fsx:` model: the fsx-lustre feature's file system, as
    its PersistentVolume names it; None for a model in the bucket."""
    if not model.startswith(sources.FSX):
        return None
    wants = await desired_of(ctx.app, cluster)
    volume = await kube.get("v1", "PersistentVolume", fsx.PV_NAME) \
        if wants[FSX_LUSTRE].enabled else None
    return sources.fsx_source(model, volume, wants[FSX_LUSTRE].enabled)


async def bucket_of(ctx: Ctx, cluster: str) -> str:
    """The cluster's bucket: the operator's role reads models under its `models/` prefix."""
    cloud = cloud_of(ctx.app)
    account = str((await cloud.aws.account.caller_identity())["Account"])
    return str((await facts_of(ctx.app, cluster)).get("bucket")
               or shared_bucket(cluster, account, cloud.aws.region))


async def objects(kube: KubePort, name: str) -> tuple[Shape, Shape | None] | None:
    """The operator's Deployment and Service of podplane's managed endpoint `name`; None when
    there is no such config (a self-managed endpoint, or nothing)."""
    config = await config_of(kube, name)
    if config is None:
        return None
    dep = await deployment_of(kube, config)
    if dep is None:
        raise NotFound(f"Managed endpoint {name!r} has no model server yet.",
                       hint="Wait for its create operation (operation_wait).")
    svc = await kube.get("v1", "Service", dep["metadata"]["name"], NAMESPACE)
    return dep, svc if svc is not None and _owned_by(svc, config["metadata"].get("uid")) \
        else None


async def config_of(kube: KubePort, name: str) -> Shape | None:
    """podplane's config `name`, of either kind the operator serves; None when there is none
    (or the operator's CRDs are not installed)."""
    for kind in KINDS:
        try:
            found = await kube.get(managed.API_VERSION, kind, name, NAMESPACE)
        except NotFound:   # the operator's CRD is not installed
            continue
        if is_ours(found, name):
            return found
    return None


async def configs(kube: KubePort) -> list[Shape]:
    found: list[Shape] = []
    for kind in KINDS:
        try:
            found += await kube.list(managed.API_VERSION, kind, namespace=NAMESPACE,
                                     labels=OWNED)
        except NotFound:
            continue
    return found


async def deployment_of(kube: KubePort, config: Shape) -> Shape | None:
    """The Deployment the operator made for the config (named in `status.deploymentStatus`,
    else after the config) when the config owns it."""
    named = ((config.get("status") or {}).get("deploymentStatus") or {}).get("name")
    dep = await kube.get("apps/v1", "Deployment", named or config["metadata"]["name"],
                         NAMESPACE)
    return dep if dep is not None and _owned_by(dep, config["metadata"].get("uid")) else None


async def pods_of(kube: KubePort, name: str) -> list[Shape]:
    """The pods of the operator's Deployment for `name`, by that Deployment's own selector
    (the operator, not podplane, labels them)."""
    config = await config_of(kube, name)
    dep = await deployment_of(kube, config) if config is not None else None
    labels = (((dep or {}).get("spec") or {}).get("selector") or {}).get("matchLabels")
    if not labels:
        return []
    return await kube.list("v1", "Pod", namespace=NAMESPACE, labels=dict(labels))


def _owned_by(obj: Shape, uid: str | None) -> bool:
    return any(r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or [])


async def is_managed(kube: KubePort, name: str) -> bool:
    return await config_of(kube, name) is not None


async def wait_ready(ctx: StepContext, kube: KubePort, name: str) -> Shape:
    """Until the operator says DeploymentComplete; DeploymentFailed ends the step with its
    message (../shared/crds/hyperpod-inference status.state)."""
    waited = 0.0
    while True:
        found = await config_of(kube, name) or {}
        status = found.get("status") or {}
        state = status.get("state")
        generation = int((found.get("metadata") or {}).get("generation") or 1)
        seen = int(status.get("observedGeneration") or 0) >= generation   # not a stale state
        if state == "DeploymentComplete" and seen:
            return {"state": state, "replicas": status.get("replicas")}
        if state == "DeploymentFailed" or waited >= READY_SECONDS:
            why = ((status.get("conditions") or [{}])[-1]).get("message") or state or \
                "the operator wrote no status"
            raise CloudError(f"Managed endpoint {name}: {why}.", code="endpoint_not_ready",
                             retryable=False, hint=_not_ready_hint(found))
        await ctx.sleep(POLL_SECONDS)
        waited += POLL_SECONDS


def _not_ready_hint(config: Shape) -> str:
    model = (config.get("spec") or {}).get("model") or {}
    if config.get("kind") == JUMPSTART_KIND and not model.get("acceptEula"):
        return ("If the model is gated, its licence must be accepted: once the user read and "
                "accepted it, delete this endpoint and create it again with accept_eula=true.")
    return ("Check the inference-operator feature (feature_get) and the config's status, "
            "then retry this step.")


async def delete(kube: KubePort, name: str) -> None:
    config = await config_of(kube, name)
    if config is None:   # gone already (a resumed step)
        return
    with contextlib.suppress(NotFound):
        await kube.delete(managed.API_VERSION, str(config["kind"]), name, namespace=NAMESPACE,
                          propagation="Background")
