"""What each feature consists of on one cluster: its resources, on or off.

Pure: given the cluster's facts and the feature's settings, the list of `Resource`s, in the
order they are created (deletes run in reverse). Every Kubernetes object carries the feature's
label and podplane's managed-by label; every IAM role the feature tag.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from podplane.domain.features import catalog as cat
from podplane.domain.features import fsx
from podplane.domain.features import hyperpod_observability as hpo
from podplane.domain.features import inference_operator as inference
from podplane.domain.features import mlflow as mlf
from podplane.domain.features import spaces as sp
from podplane.domain.features.checkpointing import (
    SERVICE_ACCOUNT,
    checkpoint_policy,
    pod_identity_trust,
)
from podplane.domain.features.model import (
    FEATURE_LABEL,
    FEATURE_TAG,
    MANAGED_LABEL,
    Resource,
)
from podplane.domain.manifests import feature_operators
from podplane.domain.manifests.autoscaling import node_class, node_pool
from podplane.domain.manifests.common import Manifest
from podplane.domain.names import derived_name

Shape = dict[str, Any]
ROLE_ANNOTATION = "podplane.io/iam-role"


@dataclass(frozen=True)
class ClusterFacts:
    name: str          # podplane's name for the cluster
    hyperpod: str
    eks: str
    account: str
    region: str
    bucket: str
    hyperpod_arn: str
    subnet: str = ""           # the HyperPod cluster's compute subnet (VpcConfig.Subnets[0])
    security_group: str = ""   # its nodes' security group (VpcConfig.SecurityGroupIds[0])

    def role_name(self, purpose: str) -> str:
        return derived_name(f"podplane-{self.name}", purpose, 64, self.region)

    def role_arn(self, purpose: str) -> str:
        return f"arn:aws:iam::{self.account}:role/{self.role_name(purpose)}"


def kube_key(obj: Manifest) -> str:
    ns = obj["metadata"].get("namespace")
    return f"kube {obj['apiVersion']} {obj['kind']} {(ns + '/') if ns else ''}" \
        f"{obj['metadata']['name']}"


def mark(feature: str, obj: Manifest) -> Manifest:
    labels = obj["metadata"].setdefault("labels", {})
    labels.update({FEATURE_LABEL: feature, MANAGED_LABEL: "podplane"})
    return obj


def kube(feature: str, objs: list[Manifest], on: bool) -> list[Resource]:
    return [Resource(feature, "kube", kube_key(o), mark(feature, o), on) for o in objs]


def role(feature: str, facts: ClusterFacts, purpose: str, trust: Shape, policy: Shape | None,
         on: bool, managed: tuple[str, ...] = ()) -> Resource:
    """A role with podplane's inline policy, or AWS managed policies attached, or both."""
    desired: Shape = {"name": facts.role_name(purpose), "trust": trust}
    if policy is not None:
        desired["policy"] = policy
    if managed:
        desired["managed"] = sorted(managed)
    desired["tags"] = {FEATURE_TAG: feature, "podplane:cluster": facts.name}
    return Resource(feature, "iam-role", f"iam role {facts.role_name(purpose)}", desired, on)


def addon(feature: str, addon_name: str, on: bool) -> Resource:
    """An EKS add-on at the version EKS picks for the cluster; the tag marks it as ours."""
    return Resource(feature, "eks-addon", f"eks addon {addon_name}",
                    {"addonName": addon_name, "tags": {FEATURE_TAG: feature}}, on)


def setting(feature: str, field: str, value: Shape) -> Resource:
    return Resource(feature, "hyperpod-setting", f"hyperpod {field}", {field: value})


def resources(name: str, on: bool, settings: Shape, facts: ClusterFacts,
              found: Shape | None = None) -> list[Resource]:
    """`found`: what the cloud already shows that the resources name (FSx: the file
    system, whose id, DNS name and mount name the PersistentVolume carries)."""
    spec = cat.feature(name)
    if name == cat.KUBERAY:
        return kube(name, feature_operators.kuberay(name, spec.version or ""), on)
    if name == cat.KEDA:
        return kube(name, feature_operators.keda(name, spec.version or ""), on)
    if name == cat.TIERED_CHECKPOINTING:
        return tiered(on, settings, facts)
    if name == cat.MANAGED_AUTOSCALING:
        return autoscaling(on, settings, facts)
    if name == cat.TASK_GOVERNANCE:
        return [addon(name, cat.TASK_GOVERNANCE_ADDON, on)]
    if name == cat.OBSERVABILITY:
        return observability(on, facts)
    if name == cat.FSX_LUSTRE:
        return fsx_lustre(on, settings, facts, found)
    if name == cat.INFERENCE_OPERATOR:
        return inference.resources(on, facts.name, facts.account, facts.region, facts.bucket,
                                   facts.hyperpod_arn, (found or {}).get("issuer", ""))
    if name == cat.HYPERPOD_OBSERVABILITY:
        return hyperpod_observability(on, settings, facts, found)
    if name == cat.MLFLOW:
        return mlflow(on, settings, facts)
    if name == cat.SPACES:
        return spaces(on, facts, found)
    return []   # always-on features are observed, never rendered


def tiered(on: bool, settings: Shape, facts: ClusterFacts) -> list[Resource]:
    """TieredStorageConfig (SageMaker API UpdateCluster, ClusterTieredStorageConfig) and the
    identity chain pods use to persist checkpoints: role -> Pod Identity -> ServiceAccount."""
    name, ns = cat.TIERED_CHECKPOINTING, settings.get("namespace", "default")
    arn = facts.role_arn("ckpt")
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
        "name": SERVICE_ACCOUNT, "namespace": ns, "annotations": {ROLE_ANNOTATION: arn}}}
    config = {"Mode": "Enable", "InstanceMemoryAllocationPercentage":
              settings.get("memory_percent", 20)} if on else {"Mode": "Disable"}
    return [
        role(name, facts, "ckpt", pod_identity_trust(),
             checkpoint_policy(facts.bucket, facts.name), on),
        Resource(name, "pod-identity", f"pod identity {ns}/{SERVICE_ACCOUNT}",
                 {"namespace": ns, "serviceAccount": SERVICE_ACCOUNT}, on),
        *kube(name, [account], on),
        setting(name, "TieredStorageConfig", config),
    ]


def observability(on: bool, facts: ClusterFacts) -> list[Resource]:
    """The agent's identity first (role, then the association naming it), then the add-on,
    so its pods start with credentials; disable removes them in reverse."""
    name, (ns, account) = cat.OBSERVABILITY, cat.CLOUDWATCH_AGENT
    return [
        role(name, facts, "cw", pod_identity_trust(), None, on,
             managed=(cat.CLOUDWATCH_AGENT_POLICY,)),
        Resource(name, "pod-identity", f"pod identity {ns}/{account}",
                 {"namespace": ns, "serviceAccount": account, "roleArn": facts.role_arn("cw")},
                 on),
        addon(name, cat.OBSERVABILITY_ADDON, on),
    ]


def fsx_lustre(on: bool, settings: Shape, facts: ClusterFacts, found: Shape | None
               ) -> list[Resource]:
    """The CSI driver add-on, the file system (and its ports), then the static PV and its
    claim; disable removes them in reverse (domain/features/fsx.py)."""
    capacity = int((found or {}).get("StorageCapacity") or settings["capacity_gib"])
    claimed = int((found or {}).get(fsx.CLAIMED_GIB) or capacity)   # kept after a resize
    return [addon(cat.FSX_LUSTRE, fsx.CSI_ADDON, on),
            *fsx.storage(on, settings, facts.name, facts.subnet, facts.security_group),
            *kube(cat.FSX_LUSTRE, [fsx.volume(found, capacity), fsx.claim(claimed)], on)]


def hyperpod_observability(on: bool, settings: Shape, facts: ClusterFacts,
                           found: Shape | None) -> list[Resource]:
    """`found`: the Prometheus workspace (its ARN and endpoint name it in the role's policy
    and the add-on's configuration); domain/features/hyperpod_observability.py."""
    eks_arn = f"arn:aws:eks:{facts.region}:{facts.account}:cluster/{facts.eks}"
    made = role(hpo.NAME, facts, hpo.ROLE_PURPOSE, hpo.trust(facts.account, eks_arn), None, on)
    return hpo.resources(on, settings, facts.name, made.desired,
                         facts.role_arn(hpo.ROLE_PURPOSE), found,
                         f"arn:aws:aps:{facts.region}:{facts.account}:workspace/pending")


def mlflow(on: bool, settings: Shape, facts: ClusterFacts) -> list[Resource]:
    """The tracking server with its role (or the user's own server), then the jobs' identity
    chain: role -> Pod Identity -> ServiceAccount (domain/features/mlflow.py)."""
    name, mine = cat.MLFLOW, mlf.existing_name(settings)
    server_name = mine or mlf.server_name(facts.name)
    arn = mlf.server_arn(facts.account, facts.region, server_name)
    made = [role(name, facts, "mlflow", service_trust("sagemaker.amazonaws.com"),
                 mlf.server_policy(facts.bucket, facts.name), on),
            mlf.server(on, settings, facts.name, facts.bucket, facts.role_arn("mlflow"))]
    ns, account = mlf.service_account(arn)["metadata"]["namespace"], mlf.SERVICE_ACCOUNT
    return [*([mlf.existing(on, mine)] if mine else made),
            role(name, facts, "mlflow-jobs", pod_identity_trust(), mlf.job_policy(arn), on),
            Resource(name, "pod-identity", f"pod identity {ns}/{account}",
                     {"namespace": ns, "serviceAccount": account,
                      "roleArn": facts.role_arn("mlflow-jobs")}, on),
            *kube(name, [mlf.service_account(arn)], on)]


def spaces(on: bool, facts: ClusterFacts, found: Shape | None = None) -> list[Resource]:
    """The EBS CSI driver's identity and add-on (unless someone else's driver is there:
    `found`), the home volumes' class, the Spaces controller's identity and add-on, then the
    shared claims; off removes them in reverse (domain/features/spaces.py). The Spaces add-on
    counts as data: removing it removes every space with its home volume (ADR 0016)."""
    name = sp.NAME
    eks_arn = f"arn:aws:eks:{facts.region}:{facts.account}:cluster/{facts.eks}"
    ebs: list[Resource] = []
    if not (found or {}).get(sp.EBS_FOREIGN):
        ebs = [role(name, facts, sp.EBS_ROLE_PURPOSE, hpo.trust(facts.account, eks_arn),
                    sp.ebs_hyperpod_policy(facts.hyperpod_arn, eks_arn), on,
                    managed=(sp.EBS_POLICY,)),
               association(name, sp.EBS_CONTROLLER, facts.role_arn(sp.EBS_ROLE_PURPOSE), on)]
    made = addon(name, sp.ADDON, on)
    return [*ebs, addon(name, sp.EBS_ADDON, on), *kube(name, [sp.home_class()], on),
            role(name, facts, sp.CONTROLLER_ROLE_PURPOSE, hpo.trust(facts.account, eks_arn),
                 None, on, managed=(sp.CONTROLLER_POLICY,)),
            association(name, sp.CONTROLLER, facts.role_arn(sp.CONTROLLER_ROLE_PURPOSE), on),
            Resource(name, made.kind, made.key, made.desired, on, data=True),
            *kube(name, sp.shared_volumes(facts.bucket, facts.region), on)]


def association(feature: str, account: tuple[str, str], role_arn: str, on: bool) -> Resource:
    """A Pod Identity association for an add-on's service account: podplane's only while it
    names podplane's role (services/features/live.py)."""
    ns, sa = account
    return Resource(feature, "pod-identity", f"pod identity {ns}/{sa}",
                    {"namespace": ns, "serviceAccount": sa, "roleArn": role_arn}, on)


def autoscaling(on: bool, settings: Shape, facts: ClusterFacts) -> list[Resource]:
    """HyperPod-managed Karpenter (SageMaker docs "Autoscaling on HyperPod EKS"): the role
    HyperPod assumes to add and remove nodes, AutoScaling on the cluster, then one
    HyperpodNodeClass and NodePool per chosen group."""
    name = cat.MANAGED_AUTOSCALING
    config: Shape = {"Mode": "Enable", "AutoScalerType": "Karpenter"} if on \
        else {"Mode": "Disable"}
    objs: list[Manifest] = []
    for group in settings.get("groups", []) if on else []:
        objs += [node_class(group), node_pool(group)]
    out = [role(name, facts, "karpenter", service_trust(HYPERPOD_PRINCIPAL),
                autoscaler_policy(facts), on),
           setting(name, "AutoScaling", config)]
    return out + kube(name, objs, on)


# The service that assumes the autoscaling ClusterRole: SageMaker docs "Create an IAM role for
# HyperPod autoscaling with Karpenter" (sagemaker-hyperpod-eks-autoscaling-iam), trust policy.
HYPERPOD_PRINCIPAL = "hyperpod.sagemaker.amazonaws.com"


def service_trust(service: str) -> Shape:
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]}


def autoscaler_policy(facts: ClusterFacts) -> Shape:
    """What HyperPod's Karpenter does with the role: add and delete the cluster's nodes
    (SageMaker docs, sagemaker-hyperpod-eks-autoscaling-iam: these two actions on the account's
    clusters, plus KMS grants for volumes encrypted with a customer key, which podplane does
    not use), on this cluster only."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "ScaleClusterNodes", "Effect": "Allow",
        "Action": ["sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes"],
        "Resource": facts.hyperpod_arn}]}


def policy_text(doc: Shape) -> str:
    return json.dumps(doc, sort_keys=True)
