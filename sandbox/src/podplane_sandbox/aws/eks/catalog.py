"""EKS add-on versions the sandbox offers (a plausible subset of the real catalogue)."""

from __future__ import annotations

from typing import Any

K8S_VERSIONS = ("1.31", "1.32", "1.33", "1.34")

# name -> (type, versions newest first, default namespace)
ADDONS: dict[str, tuple[str, list[str], str]] = {
    "vpc-cni": ("networking", ["v1.20.0-eksbuild.1", "v1.19.5-eksbuild.3"], "kube-system"),
    "coredns": ("networking", ["v1.12.1-eksbuild.2", "v1.11.4-eksbuild.14"], "kube-system"),
    "kube-proxy": ("networking", ["v1.33.0-eksbuild.2", "v1.32.3-eksbuild.7"], "kube-system"),
    "eks-pod-identity-agent": ("security", ["v1.3.7-eksbuild.2", "v1.3.5-eksbuild.2"],
                               "kube-system"),
    "aws-ebs-csi-driver": ("storage", ["v1.45.0-eksbuild.2", "v1.44.0-eksbuild.1"],
                           "kube-system"),
    "aws-mountpoint-s3-csi-driver": ("storage", ["v2.1.0-eksbuild.1", "v1.15.0-eksbuild.1"],
                                     "kube-system"),
    "aws-fsx-csi-driver": ("storage", ["v1.5.0-eksbuild.1"], "kube-system"),
    "amazon-cloudwatch-observability": ("observability",
                                        ["v4.1.0-eksbuild.1", "v3.7.0-eksbuild.1"],
                                        "amazon-cloudwatch"),
    "metrics-server": ("observability", ["v0.7.2-eksbuild.3"], "kube-system"),
    "cert-manager": ("security", ["v1.18.2-eksbuild.1", "v1.17.2-eksbuild.1"], "cert-manager"),
    "amazon-sagemaker-hyperpod-taskgovernance": ("machine-learning", ["v1.2.0-eksbuild.1"],
                                                 "kube-system"),
    "amazon-sagemaker-hyperpod-observability": ("observability", ["v1.0.3-eksbuild.1"],
                                                "hyperpod-observability"),
    "amazon-sagemaker-hyperpod-training-operator": ("machine-learning", ["v1.1.0-eksbuild.1"],
                                                    "aws-hyperpod"),
    # aws/sagemaker-hyperpod-cli @ 011ca927, charts/inference-operator/migration/helm_to_addon.sh
    "amazon-sagemaker-hyperpod-inference": ("machine-learning", ["v1.0.0-eksbuild.1"],
                                            "hyperpod-inference-system"),
    # hyp's space templates need 0.1.1 (v1_0) and 0.1.6 (v1_1): aws/sagemaker-hyperpod-cli
    # hyperpod-space-template MIN_ADDON_VERSION; the namespace is jupyter-k8s's default
    "amazon-sagemaker-spaces": ("machine-learning", ["v0.1.6-eksbuild.1", "v0.1.1-eksbuild.1"],
                                "jupyter-k8s-system"),
}


# What each add-on runs. Only DaemonSets whose pods tolerate not-ready nodes and use host
# networking run on an empty cluster; an add-on with a Deployment needs a Ready node to place
# its replicas (EKS health issue InsufficientNumberOfReplicas until then). Sources: EKS docs
# "Amazon EKS add-ons" (CoreDNS, cert-manager, Mountpoint v2 controller), pulumi-eks#1819,
# terraform-aws-eks#3001, eksctl#5458 (coredns does not settle without nodegroups).
DAEMONSET_ONLY = frozenset({"vpc-cni", "kube-proxy", "eks-pod-identity-agent"})

# Add-ons that accept `podIdentityAssociations`, and for which service account (EKS docs
# "IAM roles for Amazon EKS add-ons"; SageMaker docs "Installing the training operator").
POD_IDENTITY_ACCOUNTS: dict[str, tuple[str, str]] = {
    "vpc-cni": ("kube-system", "aws-node"),
    "aws-ebs-csi-driver": ("kube-system", "ebs-csi-controller-sa"),
    "aws-mountpoint-s3-csi-driver": ("kube-system", "s3-csi-driver-sa"),
    "amazon-sagemaker-hyperpod-training-operator": ("aws-hyperpod",
                                                    "hp-training-operator-controller-manager"),
    # SageMaker docs "Set up permissions": the Spaces add-on execution role, always required,
    # is the controller pod's (names: kube/spaces_addon.py)
    "amazon-sagemaker-spaces": ("jupyter-k8s-system", "jupyter-k8s-controller-manager"),
}


def needs_nodes(name: str) -> bool:
    return name not in DAEMONSET_ONLY


def addon_info(name: str, k8s_version: str | None) -> dict[str, Any]:
    kind, versions, namespace = ADDONS[name]
    compat = [k8s_version] if k8s_version else list(K8S_VERSIONS)
    return {
        "addonName": name, "type": kind, "owner": "aws", "publisher": "eks",
        "defaultNamespace": namespace,
        "addonVersions": [{
            "addonVersion": v, "architecture": ["amd64", "arm64"],
            "compatibilities": [{"clusterVersion": cv, "platformVersions": ["*"],
                                 "defaultVersion": i == 0} for cv in compat],
            "requiresConfiguration": False, "requiresIamPermissions": name in
            ("vpc-cni", "aws-ebs-csi-driver", "aws-mountpoint-s3-csi-driver",
             "amazon-sagemaker-spaces"),
        } for i, v in enumerate(versions)],
    }


def default_version(name: str) -> str:
    return ADDONS[name][1][0]
