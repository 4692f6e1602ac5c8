"""A feature as reconcilable resources: what it wants, what is there, and the plan between.

A feature renders `Resource`s (Kubernetes objects, HyperPod cluster settings, IAM roles, Pod
Identity associations), each `present` (should exist as described) or not (should be gone if
podplane made it). Observation gives each resource's live state; `plan` compares the two and
orders the actions: creates and updates in the order rendered, deletes in reverse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["kube", "hyperpod-setting", "iam-role", "pod-identity"]
Verb = Literal["create", "update", "delete"]
Shape = dict[str, Any]
FEATURE_LABEL = "podplane.io/feature"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
FEATURE_TAG = "podplane:feature"


@dataclass(frozen=True)
class Resource:
    """One thing a feature owns. `desired` holds only the fields podplane sets: the live
    object may carry more (defaults, status), which never counts as drift."""

    feature: str
    kind: Kind
    key: str          # stable and readable: "kube ray-system/Deployment/kuberay-operator"
    desired: Shape
    present: bool = True


@dataclass(frozen=True)
class Seen:
    """A resource's live state: None when absent; `owned` when it carries podplane's mark."""

    live: Shape | None
    owned: bool = False


@dataclass(frozen=True)
class Action:
    verb: Verb
    resource: Resource
    reason: str
    differences: list[str] = field(default_factory=list)

    def describe(self) -> Shape:
        return {"verb": self.verb, "kind": self.resource.kind, "key": self.resource.key,
                "feature": self.resource.feature, "reason": self.reason,
                "differences": self.differences}


@dataclass(frozen=True)
class Plan:
    actions: list[Action]
    left_alone: list[str]   # present but not podplane's: disable never touches them

    @property
    def empty(self) -> bool:
        return not self.actions

    def describe(self) -> Shape:
        return {"actions": [a.describe() for a in self.actions], "left_alone": self.left_alone}


def differences(desired: Any, live: Any, path: str = "") -> list[str]:
    """Where `live` departs from `desired`, field by field; extra live fields do not count.
    Lists compare whole (a rule list or a policy's statements are one value)."""
    if isinstance(desired, dict) and isinstance(live, dict):
        out: list[str] = []
        for key, want in desired.items():
            out += differences(want, live.get(key), f"{path}.{key}" if path else str(key))
        return out
    if desired == live:
        return []
    return [f"{path or 'value'}: want {_short(desired)}, found {_short(live)}"]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def plan(resources: list[Resource], seen: dict[str, Seen]) -> Plan:
    """The actions that bring what is seen to what is rendered; empty when they agree."""
    ups: list[Action] = []
    downs: list[Action] = []
    left: list[str] = []
    for res in resources:
        now = seen.get(res.key, Seen(None))
        if res.present:
            if now.live is None:
                ups.append(Action("create", res, f"{res.key} is missing"))
            elif diff := differences(res.desired, now.live):
                ups.append(Action("update", res, f"{res.key} differs", diff))
        elif now.live is not None:
            if now.owned:
                downs.append(Action("delete", res, f"{res.key} was made by podplane"))
            else:
                left.append(res.key)
    return Plan(ups + list(reversed(downs)), left)


def drift(resources: list[Resource], seen: dict[str, Seen]) -> list[str]:
    """What differs from desired, in words (empty: observed equals desired)."""
    found = plan(resources, seen)
    return [d for a in found.actions for d in (a.differences or [a.reason])]
