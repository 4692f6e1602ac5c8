"""Managed features of a cluster: list, get, set (enable, disable, change settings).

Set follows the diff contract: the client sends only what it changes; the backend merges it
with the recorded desired state, observes the cloud and answers `changed: false` (no
operation) when nothing differs, the plan on `dry_run`, or the operation that applies it.
Sending the same request for a drifted feature reconciles it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from podplane.domain.effects import Effect
from podplane.domain.errors import Conflict, InvalidInput
from podplane.domain.features import autoscaled_groups
from podplane.domain.features import catalog as cat
from podplane.domain.features.model import FeaturePlan
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.features import fsx, mlflow
from podplane.services.features import hyperpod_observability as hpo
from podplane.services.features import inference_operator as inference
from podplane.services.features.live import Live
from podplane.services.features.state import (
    Desired,
    cluster_facts,
    desired_of,
    plan_for,
    record,
)
from podplane.services.features.workflows import FEATURE_SET
from podplane.services.mutation import Outcome, key_used, start
from podplane.services.registry import escalate_to_destroy, service

Shape = dict[str, Any]
TRAINING_ADDON = "amazon-sagemaker-hyperpod-training-operator"


@dataclass(frozen=True)
class SettingView:
    name: str
    kind: str
    default: cat.SettingValue
    help: str
    minimum: int | None
    maximum: int | None


@dataclass(frozen=True)
class FeatureView:
    """A feature on one cluster: what is asked (desired), what is there (observed), and
    what differs (drift)."""

    name: str
    title: str
    summary: str
    creates: str
    version: str | None
    always_on: bool
    requires: list[str]
    dependants: list[str]
    core_dependencies: list[str]
    notes: list[str]
    settings_schema: list[SettingView]
    desired_enabled: bool
    desired_settings: dict[str, cat.SettingValue]
    observed_enabled: bool
    drifted: bool
    drift: list[str]
    left_alone: list[str]


def target(cluster: str) -> str:
    # features share the cluster's HyperPod settings (one UpdateCluster at a time)
    return f"cluster/{cluster}/features"


async def _view(live: Live, spec: cat.FeatureSpec, want: Desired, facts: Any) -> FeatureView:
    if spec.always_on:
        observed = await _addon_active(live)
        drift = [] if observed else [f"the {TRAINING_ADDON} add-on is not ACTIVE"]
        left: list[str] = []
    else:
        as_wanted = await plan_for(live, spec.name, want, facts)
        as_on = as_wanted if want.enabled else await plan_for(
            live, spec.name, Desired(True, want.settings, False), facts)
        observed = not any(s.verb == "create" for s, _ in as_on.steps)
        drift = as_wanted.drift()
        left = as_wanted.left_alone
    return FeatureView(
        spec.name, spec.title, spec.summary, spec.creates, spec.version, spec.always_on,
        list(spec.requires), cat.dependants(spec.name), list(spec.core), list(spec.notes),
        [SettingView(**asdict(s)) for s in spec.settings], want.enabled, want.settings,
        observed, bool(drift), drift, left)


async def _addon_active(live: Live) -> bool:
    addon = await live.cloud.aws.eks.describe_addon(live.eks, TRAINING_ADDON) or {}
    return addon.get("status") in ("ACTIVE", "DEGRADED", "UPDATING")


async def _setup(ctx: Ctx, cluster: str) -> tuple[scope.ClusterRef, Live, Any]:
    ref = await scope.cluster_ref(ctx, cluster)
    cloud = cloud_of(ctx.app)
    live = Live(cloud, ref.hyperpod, ref.eks, ref.name)
    facts = await cluster_facts(ctx.app, cloud, ref, await live.described())
    return ref, live, facts


@service(Effect.READ, "feature.list")
async def list_features(ctx: Ctx, cluster: str) -> list[FeatureView]:
    _, live, facts = await _setup(ctx, cluster)
    wants = await desired_of(ctx.app, cluster)
    return [await _view(live, spec, wants[spec.name], facts) for spec in cat.FEATURES]


@service(Effect.READ, "feature.get")
async def get_feature(ctx: Ctx, cluster: str, name: str) -> FeatureView:
    spec = cat.feature(name)
    _, live, facts = await _setup(ctx, cluster)
    return await _view(live, spec, (await desired_of(ctx.app, cluster))[name], facts)


@service(Effect.READ, "feature.plan")
async def plan_feature(ctx: Ctx, cluster: str, name: str, *, enabled: bool | None = None,
                       settings: dict[str, Any] | None = None) -> Outcome:
    """The plan of a change, computed exactly as set_feature would; changes nothing."""
    return await _change(ctx, cluster, name, enabled, settings, True, None, confirm=None)


@service(Effect.MUTATE, "feature.set",
         target=lambda cluster, name, *_a, **_k: f"cluster/{cluster}/feature/{name}")
async def set_feature(ctx: Ctx, cluster: str, name: str, *, enabled: bool | None = None,
                      settings: dict[str, Any] | None = None, confirm: bool = False,
                      dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    """A change whose plan terminates nodes is a destroy (admin + confirm), like a
    scale-down; every other change needs the operator role."""
    return await _change(ctx, cluster, name, enabled, settings, dry_run, idempotency_key,
                         confirm=confirm)


async def _change(ctx: Ctx, cluster: str, name: str, enabled: bool | None,
                  settings: dict[str, Any] | None, dry_run: bool,
                  idempotency_key: str | None, *, confirm: bool | None) -> Outcome:
    """`confirm` None: only a plan is wanted (feature.plan), which never escalates."""
    spec = cat.feature(name)
    ref, live, facts = await _setup(ctx, cluster)
    wants = await desired_of(ctx.app, cluster)
    now = wants[name]
    want = Desired(now.enabled if enabled is None else enabled,
                   cat.check_settings(spec, {**now.settings, **(settings or {})}), True)
    params = {"cluster_ref": ref.params(), "feature": name, "enabled": want.enabled,
              "settings": want.settings, "facts": asdict(facts)}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, FEATURE_SET, target(cluster), params, idempotency_key, {})
    cat.check_switch(name, want.enabled, {n for n, d in wants.items() if d.enabled})
    if spec.always_on:
        return Outcome(False, {"actions": [], "left_alone": [],
                               "note": f"{spec.title} is always on."}, dry_run=dry_run)
    if want.enabled:
        await _check_prerequisites(live, name, want)
        if name == cat.FSX_LUSTRE:
            await fsx.check(live, want.settings, facts)
        if name == cat.HYPERPOD_OBSERVABILITY:
            await hpo.check(live, want.settings, facts.name)
        if name == cat.MLFLOW:
            await mlflow.check(live, want.settings)
    found = await plan_for(live, name, want, facts)
    if confirm is not None:
        _escalate_a_destroy(ctx, name, found, confirm=confirm, dry_run=dry_run)
    body = {**found.describe(), "feature": name, "enabled": want.enabled,
            "settings": want.settings}
    if dry_run:
        return Outcome(not found.empty or want != now, body, dry_run=True)
    if found.empty:
        if (want.enabled, want.settings) != (now.enabled, now.settings) or not now.recorded:
            await record(ctx.app, cluster, name, want, ctx.principal.name)
        return Outcome(False, body)
    await record(ctx.app, cluster, name, want, ctx.principal.name)
    return await start(ctx, FEATURE_SET, target(cluster), params, idempotency_key, body)


def _escalate_a_destroy(ctx: Ctx, name: str, found: FeaturePlan, *, confirm: bool,
                        dry_run: bool) -> None:
    """A plan that terminates nodes or deletes what holds data is a destroy (ADR 0016)."""
    doomed, lost = terminates_nodes(found), found.deletes_data()
    what = ([f"terminates nodes ({', '.join(doomed)})"] if doomed else []) + \
        ([f"deletes what holds data ({', '.join(lost)})"] if lost else [])
    if what:
        escalate_to_destroy(ctx, "feature.set", f"This change to {name!r} "
                            + " and ".join(what), confirm=confirm, dry_run=dry_run)


def terminates_nodes(found: FeaturePlan) -> list[str]:
    """The plan's steps that end nodes: HyperPod's AutoScaling switched off, or a Karpenter
    NodePool deleted. Karpenter drains and terminates the nodes a deleted NodePool provisioned
    (karpenter.sh docs, Concepts > NodePools: nodes are owned by their NodePool and go with it;
    SageMaker docs, "Autoscaling on HyperPod EKS": disabling it removes the nodes it added)."""
    out = []
    for step, res in found.steps:
        if res.kind == "kube" and step.verb == "delete" and \
                res.desired.get("kind") == "NodePool":
            out.append(res.key)
        elif res.kind == "hyperpod-setting" and \
                (res.desired.get("AutoScaling") or {}).get("Mode") == "Disable":
            out.append(res.key)
    return out


async def _check_prerequisites(live: Live, name: str, want: Desired) -> None:
    """Managed autoscaling: HyperPod's prerequisites, refused before any change, in a plan or
    dry run too (SageMaker docs, autoscaling prerequisites: continuous provisioning, automatic
    node recovery; groups that exist, are on-demand and run no deep health checks:
    domain/features/autoscaled_groups.py)."""
    if name == cat.INFERENCE_OPERATOR:
        return await inference.check(live)
    if name != cat.MANAGED_AUTOSCALING:
        return
    described = await live.described()
    groups = {g["InstanceGroupName"]: g for g in scope.groups_of(described)}
    chosen = want.settings.get("groups") or []
    if not chosen:
        raise InvalidInput("Choose at least one instance group for autoscaling.",
                           field="groups")
    if described.get("NodeProvisioningMode") != "Continuous" or \
            described.get("NodeRecovery") != "Automatic":
        raise Conflict("Managed autoscaling needs NodeProvisioningMode=Continuous and "
                       "NodeRecovery=Automatic on the HyperPod cluster.",
                       hint="Clusters podplane creates have both; an imported one may not.")
    for group in chosen:
        found = groups.get(group)
        if found is None:
            raise InvalidInput(f"No instance group named {group!r}.", field="groups",
                               hint="Groups: " + ", ".join(groups) + ".")
        if (refused := autoscaled_groups.refusal(group, found)) is not None:
            raise Conflict(refused.message, hint=refused.hint, field="groups")
