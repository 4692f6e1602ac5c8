"""A feature's resources as units of the reconcile core (domain/reconcile.py).

A feature renders `Resource`s (Kubernetes objects, HyperPod cluster settings, IAM roles, Pod
Identity associations, EKS add-ons), each `present` (should exist as described) or not (should
be gone if podplane made it). Nested documents are flattened into the core's field maps
(`a.b.0.c`), and only the fields podplane writes are compared: defaults the API server adds
never count as drift. Resources depend on the one rendered before them, so creates run in
render order and deletes in reverse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from podplane.domain import reconcile

Kind = Literal["kube", "hyperpod-setting", "iam-role", "pod-identity", "eks-addon",
               "fsx-filesystem", "sg-ingress", "oidc-provider", "amp-workspace",
               "mlflow-server"]
Shape = dict[str, Any]
FEATURE_LABEL = "podplane.io/feature"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
FEATURE_TAG = "podplane:feature"
# Whether deleting a resource of a kind loses data or stops what serves (ADR 0016). A kind
# missing here counts as holding data, so a feature with a new kind inherits the destroy rule.
HOLDS_DATA: dict[str, bool] = {
    "kube": False, "hyperpod-setting": False, "iam-role": False, "pod-identity": False,
    "eks-addon": False, "sg-ingress": False, "oidc-provider": False,
    "fsx-filesystem": True, "amp-workspace": True, "mlflow-server": True,
}
# Kubernetes objects whose deletion loses data: volumes and claims (a claim's bound volume
# goes with it under a Delete reclaim policy) and the stateful sets that own claims. An
# operator's CRDs and namespace are not counted (ADR 0016): switching keda or kuberay off
# removes them, as it always did, for operators.
KUBE_DATA_KINDS = frozenset({"PersistentVolume", "PersistentVolumeClaim", "StatefulSet"})


@dataclass(frozen=True)
class Resource:
    """One thing a feature owns. `desired` holds only the fields podplane sets."""

    feature: str
    kind: Kind
    key: str          # stable and readable: "kube apps/v1 Deployment ray-system/kuberay-operator"
    desired: Shape
    present: bool = True
    # Overrides the kind's HOLDS_DATA class for this one resource: an add-on whose removal
    # takes users' volumes with it (the Spaces add-on: its spaces own their home claims).
    data: bool | None = None


@dataclass(frozen=True)
class Seen:
    """A resource's live state: None when absent; `owned` when it carries podplane's mark."""

    live: Shape | None
    owned: bool = False


@dataclass(frozen=True)
class FeaturePlan:
    """The core's plan with each step's resource at hand."""

    core: reconcile.Plan
    resources: Mapping[str, Resource]

    @property
    def empty(self) -> bool:
        return not self.core.changed

    @property
    def steps(self) -> list[tuple[reconcile.Step, Resource]]:
        """The core's order, except that an IAM role goes last when deleted: a HyperPod
        setting that names it (ClusterRole) must be switched off while it still exists."""
        steps = [(s, self.resources[s.key]) for s in self.core.steps]
        last = [p for p in steps if p[0].verb == "delete" and p[1].kind == "iam-role"]
        return [p for p in steps if p not in last] + last

    @property
    def left_alone(self) -> list[str]:
        return [f"{a.key}: {a.reason}" for a in self.core.left_alone]

    def drift(self) -> list[str]:
        return [d for s in self.core.steps
                for d in ([f"{s.key}: {w}" for w in _words(s)] or [s.reason])]

    def deletes_data(self) -> list[str]:
        """The keys of the steps that delete something holding data (a destroy)."""
        return [r.key for s, r in self.steps if s.verb == "delete" and holds_data(r)]

    def describe(self) -> Shape:
        return {"actions": [{"verb": s.verb, "kind": s.kind, "key": s.key,
                             "feature": r.feature, "reason": s.reason,
                             "differences": _words(s)} for s, r in self.steps],
                "left_alone": self.left_alone}


def holds_data(res: Resource) -> bool:
    if res.data is not None:
        return res.data
    if res.kind == "kube":
        return res.desired.get("kind") in KUBE_DATA_KINDS
    return HOLDS_DATA.get(res.kind, True)


def _words(step: reconcile.Step) -> list[str]:
    return [f"{d.field}: want {d.desired!r}, found {d.observed!r}" for d in step.fields]


def flatten(value: Any, prefix: str = "") -> dict[str, reconcile.FieldValue]:
    """Nested maps and lists as dotted paths to scalars (lists by index)."""
    if isinstance(value, Mapping):
        if not value and prefix:
            return {prefix: "{}"}
        out: dict[str, reconcile.FieldValue] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list | tuple):
        if not value:
            return {prefix: "[]"}
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}.{i}"))
        return out
    if value is None or isinstance(value, str | int | bool):
        return {prefix: value}
    return {prefix: str(value)}


def plan(resources: list[Resource], seen: Mapping[str, Seen]) -> FeaturePlan:
    """Present resources are desired; absent-wanted ones that exist are pruned when podplane
    made them, and left alone otherwise."""
    after: dict[str, tuple[str, ...]] = {}
    previous: tuple[str, ...] = ()
    for res in resources:
        after[res.key], previous = previous, (res.key,)
    desired = [reconcile.Desired(r.key, r.kind, flatten(r.desired), after[r.key])
               for r in resources if r.present]
    observed = {}
    for r in resources:
        now = seen.get(r.key)
        if now is None or now.live is None:
            continue
        live = flatten(now.live)
        observed[r.key] = reconcile.Observed(r.key, r.kind,
                                        {p: live.get(p) for p in flatten(r.desired)},
                                        now.owned, True, after[r.key])
    return FeaturePlan(reconcile.plan(desired, observed, prune=True),
                       {r.key: r for r in resources})
