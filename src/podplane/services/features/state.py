"""Where a feature stands on one cluster: desired (our table) against observed (the cloud)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.clusters import shared_bucket
from podplane.domain.errors import NotFound
from podplane.domain.features import catalog as cat
from podplane.domain.features.model import FEATURE_LABEL, FeaturePlan, Resource, plan
from podplane.domain.features.render import ClusterFacts, kube, resources
from podplane.domain.manifests.autoscaling import NODECLASS_API
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.state import facts_of
from podplane.services.context import AppState
from podplane.services.features import fsx, spaces
from podplane.services.features import hyperpod_observability as hpo
from podplane.services.features import inference_operator as inference
from podplane.services.features.live import Live
from podplane.services.scope import ClusterRef
from podplane.store import features as rows

Shape = dict[str, Any]
# Kinds a feature may leave behind under other names (a group dropped from autoscaling):
# found by the feature's label, removed when no longer rendered.
SWEPT = {cat.MANAGED_AUTOSCALING: (("karpenter.sh/v1", "NodePool"),
                                   (NODECLASS_API, "HyperpodNodeClass"))}


@dataclass(frozen=True)
class Desired:
    enabled: bool
    settings: Shape
    recorded: bool      # False: never set on this cluster (defaults apply)


async def desired_of(app: AppState, cluster: str) -> dict[str, Desired]:
    async with app.sessions() as db:
        found = await rows.desired(db, cluster)
    out = {}
    for spec in cat.FEATURES:
        row = found.get(spec.name)
        out[spec.name] = Desired(row.enabled, dict(row.settings), True) if row else \
            Desired(spec.always_on, cat.defaults(spec), False)
    return out


async def record(app: AppState, cluster: str, feature: str, want: Desired, by: str) -> None:
    async with app.sessions.begin() as db:
        await rows.put(db, cluster, feature, enabled=want.enabled, settings=want.settings, by=by)


async def cluster_facts(app: AppState, cloud: Cloud, ref: ClusterRef, described: Shape
                        ) -> ClusterFacts:
    account = str((await cloud.aws.account.caller_identity())["Account"])
    region = cloud.aws.region
    bucket = (await facts_of(app, ref.name)).get("bucket") or shared_bucket(ref.name, account,
                                                                          region)
    vpc = described.get("VpcConfig") or {}
    return ClusterFacts(ref.name, ref.hyperpod, ref.eks, account, region, str(bucket),
                        str(described["ClusterArn"]), (vpc.get("Subnets") or [""])[0],
                        (vpc.get("SecurityGroupIds") or [""])[0])


async def rendered(live: Live, name: str, want: Desired, facts: ClusterFacts
                   ) -> list[Resource]:
    """The feature's resources as desired, plus anything it made that is no longer wanted."""
    found = await fsx.found(live, want.settings, facts.name) if name == cat.FSX_LUSTRE \
        else None
    if name == cat.INFERENCE_OPERATOR:
        found = await inference.found(live)
    if name == cat.HYPERPOD_OBSERVABILITY:
        found = await hpo.found(live, want.settings, facts.name)
    if name == cat.SPACES:
        found = await spaces.found(live)
    out = resources(name, want.enabled, want.settings, facts, found)
    kinds = SWEPT.get(name, ())
    if kinds:
        keys = {r.key for r in out}
        k8s = await live.kube()
        for api, kind in kinds:
            out += [r for r in kube(name, await _labelled(k8s, api, kind, name), False)
                    if r.key not in keys]
    return out


async def _labelled(kube_port: KubePort, api: str, kind: str, feature: str) -> list[Shape]:
    try:
        found = await kube_port.list(api, kind, labels={FEATURE_LABEL: feature})
    except NotFound:   # the CRD is not installed: nothing of this kind exists
        return []
    return [{"apiVersion": api, "kind": kind,
             "metadata": {k: v for k, v in o["metadata"].items()
                          if k in ("name", "namespace")}} for o in found]


async def plan_for(live: Live, name: str, want: Desired, facts: ClusterFacts) -> FeaturePlan:
    res = await rendered(live, name, want, facts)
    return plan(res, await live.observe(res))
