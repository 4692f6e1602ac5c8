"""The managed features a cluster can switch on and off, their settings and dependencies.

Each feature is declared once here: its title, what it creates, the features it needs, and its
settings with their rules (REST bodies, MCP schemas and the console's form read these).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from podplane.domain.errors import Conflict, InvalidInput, NotFound
from podplane.domain.features import fsx, mlflow, spaces
from podplane.domain.features import hyperpod_observability as hpo
from podplane.domain.features import inference_operator as inference
from podplane.domain.names import DNS_LABEL_PATTERN

TRAINING_OPERATOR = "training-operator"
KUBERAY = "kuberay"
KEDA = "keda"
TIERED_CHECKPOINTING = "tiered-checkpointing"
MANAGED_AUTOSCALING = "managed-autoscaling"
TASK_GOVERNANCE = "task-governance"
OBSERVABILITY = "observability"
FSX_LUSTRE = fsx.NAME
INFERENCE_OPERATOR = inference.NAME
HYPERPOD_OBSERVABILITY = hpo.NAME
MLFLOW = mlflow.NAME
SPACES = spaces.NAME
# Container Insights through the CloudWatch Observability EKS add-on; its agent runs as
# amazon-cloudwatch/cloudwatch-agent and needs CloudWatchAgentServerPolicy, which add-on 3.1.0+
# may take through EKS Pod Identity (CloudWatch docs, "Quick start with the Amazon CloudWatch
# Observability EKS add-on"; EKS docs, "Amazon CloudWatch Observability agent").
OBSERVABILITY_ADDON = "amazon-cloudwatch-observability"
CLOUDWATCH_AGENT = ("amazon-cloudwatch", "cloudwatch-agent")
CLOUDWATCH_AGENT_POLICY = "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"
# The EKS add-on behind task governance (SageMaker docs, "HyperPod task governance" setup;
# EKS DescribeAddonVersions lists it under type machine-learning).
TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
# HyperpodNodeClass `spec.instanceGroups`: at most 10 (SageMaker docs, autoscaling node class;
# ../shared/crds/karpenter/HYPERPOD_NODECLASS.md).
MAX_AUTOSCALED_GROUPS = 10
# A setting's value: a number, a name, or a list of names.
SettingValue = int | str | list[str]


@dataclass(frozen=True)
class Setting:
    name: str
    kind: str                    # "int" | "name" | "names" | "text" (the feature checks it)
    default: SettingValue
    help: str
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class FeatureSpec:
    name: str
    title: str
    summary: str
    creates: str                 # what enabling makes, in words (disable removes exactly it)
    requires: tuple[str, ...] = ()     # features that must be on first
    core: tuple[str, ...] = ()         # core dependencies podplane installs with the cluster
    settings: tuple[Setting, ...] = ()
    always_on: bool = False      # part of every podplane cluster: shown, never switched off
    version: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    # Features whose add-ons this one uses when they are there, without needing the feature
    # itself on: switching one of those off is refused while this one is on.
    relies_on: tuple[str, ...] = ()


FEATURES: tuple[FeatureSpec, ...] = (
    FeatureSpec(
        TRAINING_OPERATOR, "HyperPod training operator",
        "Runs HyperPodPyTorchJob with job-level recovery.",
        "the amazon-sagemaker-hyperpod-training-operator EKS add-on with its Pod Identity role",
        core=("cert-manager", "eks-pod-identity-agent"), always_on=True,
        notes=("Installed with every cluster (core dependency); training jobs rely on it, so it "
               "cannot be switched off here.",)),
    FeatureSpec(
        KUBERAY, "KubeRay operator", "RayCluster, RayJob, RayService and RayCronJob.",
        "namespace ray-system, the ray.io CRDs, the operator's RBAC and Deployment",
        version="v1.7.0"),
    FeatureSpec(
        KEDA, "KEDA", "Event-driven autoscaling (ScaledObject, ScaledJob).",
        "namespace keda, the keda.sh CRDs, the operator's RBAC and Deployment",
        version="2.20.2"),
    FeatureSpec(
        TIERED_CHECKPOINTING, "Tiered checkpointing",
        "Checkpoints in instance memory, persisted to the cluster's checkpoint prefix in S3.",
        "TieredStorageConfig on the HyperPod cluster; a ServiceAccount, an IAM role limited to "
        "the cluster's checkpoint prefix and its Pod Identity association",
        requires=(TRAINING_OPERATOR,), core=("eks-pod-identity-agent",),
        settings=(
            Setting("memory_percent", "int", 20, "Share of each instance's memory kept for "
                    "checkpoints (InstanceMemoryAllocationPercentage).", 1, 100),
            Setting("namespace", "name", "default",
                    "Namespace of the training pods' ServiceAccount."),
        )),
    FeatureSpec(
        MANAGED_AUTOSCALING, "Managed autoscaling (Karpenter)",
        "HyperPod-managed Karpenter: chosen groups scale from zero for pending pods.",
        "AutoScaling on the HyperPod cluster; one HyperpodNodeClass and NodePool per chosen "
        "instance group",
        settings=(Setting("groups", "names", [], "Instance groups Karpenter may scale "
                          "(each must allow 0 nodes; on-demand only)."),),
        notes=("Needs NodeProvisioningMode=Continuous and NodeRecovery=Automatic on the "
               "HyperPod cluster (podplane creates clusters that way).",)),
    FeatureSpec(
        TASK_GOVERNANCE, "Task governance",
        "Teams share the cluster's accelerators by quota and priority (Kueue underneath).",
        f"the {TASK_GOVERNANCE_ADDON} EKS add-on, tagged as podplane's",
        notes=("The add-on brings its own Kueue: a Kueue installed separately must be removed "
               "first (SageMaker docs, task governance setup).",
               "An add-on of that name that podplane did not install is reported and left "
               "alone, never taken over or deleted.")),
    FeatureSpec(
        OBSERVABILITY, "Container Insights (CloudWatch)",
        "Node, pod and GPU metrics and container logs in CloudWatch.",
        f"an IAM role with CloudWatchAgentServerPolicy, its Pod Identity association for "
        f"{CLOUDWATCH_AGENT[0]}/{CLOUDWATCH_AGENT[1]}, and the {OBSERVABILITY_ADDON} EKS "
        "add-on, tagged as podplane's",
        core=("eks-pod-identity-agent",),
        notes=("Metrics and logs are billed by CloudWatch per the account's pricing.",
               "An association for the agent's service account that names another role is "
               "reported and left alone.")),
    FeatureSpec(
        FSX_LUSTRE, "FSx for Lustre storage",
        "A shared Lustre file system mounted by jobs through a PersistentVolumeClaim.",
        f"the {fsx.CSI_ADDON} EKS add-on; a {fsx.DEPLOYMENT} file system in the compute "
        "subnet with TCP 988 and 1018-1023 open in the node security group (or an existing "
        f"file system by id); PersistentVolume {fsx.PV_NAME} and claim {fsx.CLAIM}",
        settings=(
            Setting("capacity_gib", "int", 1200, "Storage in GiB: 1200, 2400 or a multiple "
                    "of 2400.", 1200, fsx.MAX_CAPACITY),
            Setting("throughput_per_tib", "int", 125, "MB/s per TiB: 125, 250, 500 or 1000.",
                    125, 1000),
            Setting("file_system_id", "text", "", "An existing file system to mount instead "
                    "(never deleted by podplane)."),
        ),
        notes=("Static provisioning: the driver mounts, calls no AWS API and gets no IAM role.",
               "Capacity only grows (FSx for Lustre cannot shrink): an increase resizes "
               "podplane's file system in place; throughput is fixed once made; an existing "
               "file system is never resized.")),
    FeatureSpec(
        HYPERPOD_OBSERVABILITY, "HyperPod observability (Prometheus)",
        "Cluster, node, GPU and training metrics in Amazon Managed Service for Prometheus.",
        f"an Amazon Managed Service for Prometheus workspace (or an existing one by id), an "
        f"IAM role allowed aps:RemoteWrite on that workspace only, its Pod Identity "
        f"association for {hpo.NAMESPACE}/{hpo.COLLECTOR}, and the {hpo.ADDON} EKS add-on, "
        "tagged as podplane's",
        core=("eks-pod-identity-agent",),
        settings=(Setting("workspace_id", "text", "", "An existing Prometheus workspace to "
                          "write to instead (never deleted by podplane)."),),
        notes=("Amazon Managed Grafana dashboards are not set up here.",
               "Coexists with Container Insights (a different add-on and service account).")),
    FeatureSpec(
        MLFLOW, "SageMaker managed MLflow",
        "Jobs log runs and metrics to a SageMaker MLflow tracking server.",
        "an IAM role and a tracking server whose artifacts go to the cluster bucket's "
        "mlflow/<cluster>/ prefix (or an existing server by name or ARN); the jobs' IAM role "
        f"(sagemaker-mlflow actions on that server only), its Pod Identity association and "
        f"ServiceAccount {mlflow.SERVICE_ACCOUNT}",
        core=("eks-pod-identity-agent",),
        settings=(
            Setting("size", "text", "Small", "TrackingServerSize: Small, Medium or Large."),
            Setting("tracking_server", "text", "", "An existing tracking server's name or "
                    "ARN to use instead (never deleted by podplane)."),
        ),
        notes=("Jobs submitted while it is on get MLFLOW_TRACKING_URI (the server's ARN, "
               "resolved by the sagemaker-mlflow plugin) and MLFLOW_EXPERIMENT_NAME (the "
               "job's name).",
               "Creating a tracking server takes minutes; it is billed while it exists.")),
)
# The HyperPod inference operator (domain/features/inference_operator.py has its sources).
FEATURES += (
    FeatureSpec(
        INFERENCE_OPERATOR, "HyperPod inference operator",
        "Managed model endpoints (InferenceEndpointConfig, JumpStartModel).",
        f"an IAM OIDC provider for the cluster's issuer (unless one exists), the operator's "
        f"execution role (models and TLS certificates in the cluster's bucket only) and the "
        f"{inference.ADDON} EKS add-on, tagged as podplane's",
        core=("cert-manager", inference.S3_CSI_ADDON), relies_on=(FSX_LUSTRE,),
        notes=(f"The operator checks for the FSx CSI driver at start: enable fsx-lustre or "
               f"install the {inference.FSX_CSI_ADDON} add-on first; fsx-lustre then stays "
               "on while this feature is on.",
               "An add-on, role or OIDC provider of the same name that podplane did not make "
               "is reported and left alone.")),
)
# Dev spaces (domain/features/spaces.py has its sources).
FEATURES += (
    FeatureSpec(
        SPACES, "Dev spaces (notebooks)",
        "JupyterLab and Code Editor spaces on the cluster, with the bucket's data, models and "
        "outputs mounted where jobs see them.",
        f"an IAM role for the EBS CSI driver (AmazonEBSCSIDriverPolicy, and HyperPod's volume "
        f"attach and detach on this cluster), its Pod Identity association for "
        f"{'/'.join(spaces.EBS_CONTROLLER)} and the {spaces.EBS_ADDON} EKS add-on; "
        f"StorageClass {spaces.HOME_CLASS} (gp3, the cluster's default) for home volumes; "
        f"the Spaces controller's role (AmazonSageMakerSpacesControllerPolicy), its "
        f"association for {'/'.join(spaces.CONTROLLER)} and the {spaces.ADDON} EKS add-on; "
        "both add-ons tagged as podplane's; "
        "PersistentVolumes and claims "
        + ", ".join(spaces.SHARED_CLAIMS.values())
        + f" in namespace {spaces.NAMESPACE} (the cluster bucket's "
        + ", ".join(spaces.PREFIXES.values()) + " prefixes, Mountpoint for S3)",
        core=("cert-manager", "eks-pod-identity-agent", inference.S3_CSI_ADDON),
        notes=("Switching it off removes the Spaces add-on, and with it every space, its "
               "compute and its home volume: a destroy (admin and confirm).",
               "An EBS CSI driver add-on already installed is used and left alone (no role "
               "or association is made for it); its role needs HyperPod's "
               "sagemaker:AttachClusterNodeVolume and DetachClusterNodeVolume.",
               "Add-ons, roles or associations of the same names that podplane did not make "
               "are reported and left alone.",
               "Web UI on a custom domain (router role, External DNS) and remote IDE over "
               "SSM (the SSM managed-instance role) are not set up: podplane reaches spaces "
               "through the API server.")),
)
BY_NAME = {f.name: f for f in FEATURES}
# Rules across a feature's settings, checked after each setting's own.
FEATURE_CHECKS = {FSX_LUSTRE: fsx.check, HYPERPOD_OBSERVABILITY: hpo.check,
                  MLFLOW: mlflow.check}


def feature(name: str) -> FeatureSpec:
    spec = BY_NAME.get(name)
    if spec is None:
        raise NotFound(f"No feature named {name!r}.",
                       hint="Known features: " + ", ".join(BY_NAME) + ".")
    return spec


def defaults(spec: FeatureSpec) -> dict[str, Any]:
    return {s.name: s.default for s in spec.settings}


def check_settings(spec: FeatureSpec, given: dict[str, Any]) -> dict[str, Any]:
    """The feature's settings with defaults filled in; unknown or invalid ones refused."""
    known = {s.name: s for s in spec.settings}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise InvalidInput(f"{spec.name} has no setting {', '.join(unknown)}.",
                           hint="Settings: " + (", ".join(known) or "none") + ".")
    out = defaults(spec)
    for name, value in given.items():
        out[name] = _check(known[name], value)
    check = FEATURE_CHECKS.get(spec.name)
    return check(out) if check else out


def _check(setting: Setting, value: Any) -> Any:
    if setting.kind == "int":
        if not isinstance(value, int) or isinstance(value, bool) or not (
                (setting.minimum or 0) <= value <= (setting.maximum or value)):
            raise InvalidInput(f"{setting.name} must be an integer from {setting.minimum} to "
                               f"{setting.maximum}.", field=setting.name)
        return value
    if setting.kind == "text":
        if not isinstance(value, str) or len(value) > 256:
            raise InvalidInput(f"{setting.name} must be a string.", field=setting.name)
        return value
    names = [value] if setting.kind == "name" else value
    if not isinstance(names, list) or not all(
            isinstance(n, str) and re.fullmatch(DNS_LABEL_PATTERN, n) for n in names):
        raise InvalidInput(f"{setting.name} must be " + (
            "a name" if setting.kind == "name" else "a list of names") +
            " (lowercase letters, digits and '-').", field=setting.name)
    if setting.kind == "names":
        if len(set(names)) != len(names) or len(names) > MAX_AUTOSCALED_GROUPS:
            raise InvalidInput(f"{setting.name}: at most {MAX_AUTOSCALED_GROUPS} distinct "
                               "names.", field=setting.name)
        return sorted(names)
    return value


def check_switch(name: str, enabled: bool, on: set[str]) -> None:
    """Refuse what would break a dependency: enabling before what it needs, disabling what
    another enabled feature needs, switching off an always-on feature."""
    spec = feature(name)
    if spec.always_on and not enabled:
        raise Conflict(f"{spec.title} is part of every podplane cluster and stays on.",
                       hint=spec.notes[0] if spec.notes else None)
    if enabled:
        missing = [r for r in spec.requires if r not in on]
        if missing:
            raise Conflict(f"{name} needs {', '.join(missing)} first.",
                           hint=f"Enable {', '.join(missing)}, then {name}.")
        return
    users = [f.name for f in FEATURES if name in f.requires and f.name in on]
    if users:
        raise Conflict(f"{', '.join(users)} need {name}.",
                       hint=f"Disable {', '.join(users)} first.")
    relying = [f.name for f in FEATURES if name in f.relies_on and f.name in on]
    if relying:  # e.g. fsx-lustre's CSI driver, which the inference operator checks at start
        raise Conflict(f"{', '.join(relying)} use(s) what {name} installed; switching it off "
                       "would break them.",
                       hint=f"Disable {', '.join(relying)} first.")


def dependants(name: str) -> list[str]:
    return [f.name for f in FEATURES if name in f.requires]
