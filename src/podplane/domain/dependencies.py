"""Cluster dependencies as reconcilable units, and the plan that brings actual to desired.

Where AWS offers an EKS add-on we use it; the rest are manifests podplane renders itself.
Each unit has a version and an order; a later run only fixes what differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["eks-addon", "manifest"]


@dataclass(frozen=True)
class Unit:
    name: str
    kind: Kind
    version: str | None          # None: the EKS default version for the cluster's Kubernetes
    after: tuple[str, ...] = ()  # units that must be ready first
    namespace: str = "kube-system"


CORE_UNITS: tuple[Unit, ...] = (
    Unit("vpc-cni", "eks-addon", None),
    Unit("coredns", "eks-addon", None, after=("vpc-cni",)),
    Unit("kube-proxy", "eks-addon", None),
    Unit("eks-pod-identity-agent", "eks-addon", None),
    Unit("aws-mountpoint-s3-csi-driver", "eks-addon", None, after=("eks-pod-identity-agent",)),
    Unit("cert-manager", "eks-addon", None, after=("coredns",)),
    # The HyperPod dependencies chart's parts (aws/sagemaker-hyperpod-cli @ 011ca927, chart
    # 0.1.0), rendered by domain.manifests; versions are the chart's pins.
    Unit("nvidia-device-plugin", "manifest", "0.16.1"),
    Unit("aws-efa-k8s-device-plugin", "manifest", "0.5.20"),
    Unit("neuron-device-plugin", "manifest", "2.19.16.0"),
    Unit("hyperpod-health-monitoring-agent", "manifest", "1.0.1892.0_1.0.424.0",
         namespace="aws-hyperpod"),
    Unit("hyperpod-deep-health-check", "manifest", "0.1.0", namespace="aws-hyperpod"),
    Unit("hyperpod-job-auto-restart", "manifest", "0.1.0", namespace="aws-hyperpod"),
    Unit("hyperpod-patching", "manifest", "0.1.0"),
    Unit("amazon-sagemaker-hyperpod-training-operator", "eks-addon", None,
         after=("cert-manager", "eks-pod-identity-agent")),
)


@dataclass(frozen=True)
class Observed:
    version: str | None
    healthy: bool


@dataclass(frozen=True)
class Action:
    unit: Unit
    verb: Literal["install", "upgrade", "repair"]
    reason: str


def plan_units(
    desired: tuple[Unit, ...], observed: dict[str, Observed], default_versions: dict[str, str]
) -> list[Action]:
    """The ordered actions that make `observed` match `desired`; empty when nothing differs."""
    actions = []
    for unit in ordered(desired):
        want = unit.version or default_versions.get(unit.name)
        have = observed.get(unit.name)
        if have is None:
            actions.append(Action(unit, "install", f"{unit.name} is missing"))
        elif want and have.version != want:
            actions.append(Action(unit, "upgrade", f"{unit.name} is {have.version}, want {want}"))
        elif not have.healthy:
            actions.append(Action(unit, "repair", f"{unit.name} is not healthy"))
    return actions


def ordered(units: tuple[Unit, ...]) -> list[Unit]:
    """Units in dependency order (stable: keeps declaration order among peers)."""
    by_name = {u.name: u for u in units}
    done: list[Unit] = []
    seen: set[str] = set()

    def visit(unit: Unit, path: tuple[str, ...]) -> None:
        if unit.name in seen:
            return
        if unit.name in path:
            raise ValueError(f"dependency cycle: {' -> '.join(path + (unit.name,))}")
        for name in unit.after:
            if name in by_name:
                visit(by_name[name], path + (unit.name,))
        seen.add(unit.name)
        done.append(unit)

    for unit in units:
        visit(unit, ())
    return done
