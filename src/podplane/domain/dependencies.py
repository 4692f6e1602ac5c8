"""Cluster dependencies as reconcilable units, and the plan that brings actual to desired.

Where AWS offers an EKS add-on we use it; the rest are manifests podplane renders itself.
Each unit has a version and an order; a later run only fixes what differs. The diff and the
order are the reconcile core's (domain.reconcile), shared with managed features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from podplane.domain import reconcile as core
from podplane.domain.reconcile import Desired, Step

Kind = Literal["eks-addon", "manifest"]
# When a unit can be installed: "cluster" runs on an EKS cluster without nodes (DaemonSets that
# start on not-ready nodes, RBAC); "nodes" needs Ready nodes for its Deployment's replicas
# (EKS add-on health InsufficientNumberOfReplicas otherwise; pulumi-eks#1819, eksctl#5458).
Stage = Literal["cluster", "nodes"]
TRAINING_OPERATOR_POLICY = \
    "arn:aws:iam::aws:policy/AmazonSageMakerHyperPodTrainingOperatorAccess"


@dataclass(frozen=True)
class PodIdentity:
    """The Pod Identity association an add-on's controller needs, passed at CreateAddon."""

    namespace: str
    service_account: str
    role: str                           # key of the role (services.addon_identity)
    managed_policies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unit:
    name: str
    kind: Kind
    version: str | None          # None: the EKS default version for the cluster's Kubernetes
    after: tuple[str, ...] = ()  # units that must be ready (add-ons: ACTIVE) first
    namespace: str = "kube-system"
    stage: Stage = "cluster"
    identity: PodIdentity | None = None


CSI_IDENTITY = PodIdentity("kube-system", "s3-csi-driver-sa", "s3csi")
# SageMaker docs "Installing the training operator": its controller's service account and the
# AWS managed policy it needs.
TRAINING_OPERATOR_IDENTITY = PodIdentity("aws-hyperpod", "hp-training-operator-controller-manager",
                                         "training", (TRAINING_OPERATOR_POLICY,))

CORE_UNITS: tuple[Unit, ...] = (
    Unit("vpc-cni", "eks-addon", None),
    Unit("kube-proxy", "eks-addon", None),
    Unit("eks-pod-identity-agent", "eks-addon", None),
    # The HyperPod dependencies chart's parts (aws/sagemaker-hyperpod-cli @ 011ca927, chart
    # 0.1.0), rendered by domain.manifests; versions are the chart's pins. DaemonSets and RBAC:
    # applied before HyperPod, as the chart is (SageMaker docs, "Installing packages ... Helm").
    Unit("nvidia-device-plugin", "manifest", "0.16.1"),
    Unit("aws-efa-k8s-device-plugin", "manifest", "0.5.20"),
    Unit("neuron-device-plugin", "manifest", "2.19.16.0"),
    Unit("hyperpod-health-monitoring-agent", "manifest", "1.0.1892.0_1.0.424.0",
         namespace="aws-hyperpod"),
    Unit("hyperpod-deep-health-check", "manifest", "0.1.0", namespace="aws-hyperpod"),
    Unit("hyperpod-job-auto-restart", "manifest", "0.1.0", namespace="aws-hyperpod"),
    Unit("hyperpod-patching", "manifest", "0.1.0"),
    Unit("coredns", "eks-addon", None, after=("vpc-cni",), stage="nodes"),
    Unit("cert-manager", "eks-addon", None, after=("coredns",), namespace="cert-manager",
         stage="nodes"),
    Unit("aws-mountpoint-s3-csi-driver", "eks-addon", None, after=("eks-pod-identity-agent",),
         stage="nodes", identity=CSI_IDENTITY),
    Unit("amazon-sagemaker-hyperpod-training-operator", "eks-addon", None,
         after=("cert-manager", "eks-pod-identity-agent"), namespace="aws-hyperpod",
         stage="nodes", identity=TRAINING_OPERATOR_IDENTITY),
    # The chart's Kubeflow operators (enabled by its defaults): CRDs, RBAC and a Deployment
    # each, so they wait for Ready nodes like the Deployment add-ons. Versions: the image tags.
    Unit("kubeflow-training-operator", "manifest", "v1-855e096", namespace="kubeflow",
         stage="nodes"),
    Unit("mpi-operator", "manifest", "0.5", stage="nodes"),
)


def units_for(stage: Stage) -> tuple[Unit, ...]:
    return tuple(u for u in CORE_UNITS if u.stage == stage)


@dataclass(frozen=True)
class Observed:
    version: str | None
    healthy: bool


@dataclass(frozen=True)
class Action:
    unit: Unit
    verb: Literal["install", "upgrade", "repair"]
    reason: str


def as_desired(units: tuple[Unit, ...], default_versions: dict[str, str]) -> list[Desired]:
    """The units in the reconcile core's terms. `adopt`: every cluster needs them, so podplane
    upgrades one installed outside it (an imported cluster's add-on) as well."""
    return [Desired(u.name, u.kind, {"version": u.version or default_versions.get(u.name)},
                    u.after, adopt=True) for u in units]


def plan_units(
    desired: tuple[Unit, ...], observed: dict[str, Observed], default_versions: dict[str, str]
) -> list[Action]:
    """The ordered actions that make `observed` match `desired`; empty when nothing differs."""
    by_name = {u.name: u for u in desired}
    seen = {name: core.Observed(name, by_name[name].kind, {"version": have.version},
                                healthy=have.healthy)
            for name, have in observed.items() if name in by_name}
    steps = core.plan(as_desired(desired, default_versions), seen).steps
    return [Action(by_name[s.key], _VERBS[s.cause], _reason(s)) for s in steps]


# The create path's words for the core's causes (a failed add-on is deleted and made again).
_VERBS: dict[str, Literal["install", "upgrade", "repair"]] = {
    "missing": "install", "changed": "upgrade", "unhealthy": "repair"}


def _reason(step: Step) -> str:
    if step.cause == "changed":
        return f"{step.key} is {step.fields[0].observed}, want {step.fields[0].desired}"
    return f"{step.key} is not healthy" if step.cause == "unhealthy" else step.reason


def ordered(units: tuple[Unit, ...]) -> list[Unit]:
    """Units in dependency order (stable: keeps declaration order among peers)."""
    by_name = {u.name: u for u in units}
    return [by_name[d.key] for d in core.ordered(as_desired(units, {}))]
