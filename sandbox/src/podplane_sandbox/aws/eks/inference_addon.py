"""The HyperPod inference operator add-on (`amazon-sagemaker-hyperpod-inference`): what makes
it fail, read from the add-on's configuration values, moto's IAM and the cluster's add-ons.

Rules and sources (docs/sandbox.md, "HyperPod inference operator"):
- Configuration: `executionRoleArn`, `hyperpodClusterArn` and `tlsCertificateS3Bucket` are
  required, and an add-on's execution role name must start with `SageMakerHyperPodInference`
  (aws/sagemaker-hyperpod-cli @ 011ca927, charts/inference-operator/templates/
  _validateRequiredValues.tpl; the add-on's values in migration/helm_to_addon.sh). A bad value
  fails the install: CREATE_FAILED, ConfigurationConflict.
- Prerequisites: a HyperPod cluster orchestrated by this EKS cluster, cert-manager ACTIVE (the
  chart's webhook certificate is a cert-manager Certificate): CREATE_FAILED otherwise, as for
  the training operator (the sandbox is strict where the docs are silent).
- The operator's init container `check-csi-drivers` exits unless the CSIDrivers
  `s3.csi.aws.com` and `fsx.csi.aws.com` exist (chart config/manager/manager.yaml): without
  their add-ons the Deployment has no ready replica -> DEGRADED, InsufficientNumberOfReplicas.
- Credentials: the operator assumes the execution role with its IRSA token; the role must trust
  the cluster's IAM OIDC provider (which must exist) for
  `system:serviceaccount:hyperpod-inference-system:hyperpod-inference-controller-manager`, and
  then call SageMaker UpdateClusterInference on its cluster. Either failure is the error the
  troubleshooting page quotes (https://docs.aws.amazon.com/sagemaker/latest/dg/
  sagemaker-hyperpod-model-deployment-ts-trust.html): DEGRADED, AddonPermissionFailure. Both
  are re-checked on every tick, so repairing the role makes the add-on ACTIVE again.
"""

from __future__ import annotations

import json
from typing import Any

from moto.backends import get_backend

from podplane_sandbox.aws.eks.addon_health import ClusterFacts, Issue, issue
from podplane_sandbox.aws.iam_policy import (
    allows,
    as_list,
    entity_documents,
    parse_document,
    wildcard,
)
from podplane_sandbox.aws.iam_rules import CONTEXT, _role
from podplane_sandbox.aws.world import ACCOUNT

ADDON = "amazon-sagemaker-hyperpod-inference"
NAMESPACE = "hyperpod-inference-system"
SERVICE_ACCOUNT = "hyperpod-inference-controller-manager"
ROLE_PREFIX = "SageMakerHyperPodInference"
REQUIRED = ("executionRoleArn", "hyperpodClusterArn", "tlsCertificateS3Bucket")
CSI_ADDONS = {"aws-mountpoint-s3-csi-driver": ("s3.csi.aws.com", "S3 CSI driver"),
              "aws-fsx-csi-driver": ("fsx.csi.aws.com", "FSx CSI driver")}


def config_of(addon: dict[str, Any]) -> dict[str, Any]:
    try:
        found = json.loads(addon.get("configurationValues") or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def install_failure(addon: dict[str, Any], facts: ClusterFacts) -> Issue | None:
    """Why EKS cannot install the add-on at all (CREATE_FAILED)."""
    config = config_of(addon)
    missing = [k for k in REQUIRED if not config.get(k)]
    if missing:
        return issue("ConfigurationConflict", f"{missing[0]} must be set in the add-on's "
                     "configuration values.")
    if not str(config["executionRoleArn"]).rsplit("/", 1)[-1].startswith(ROLE_PREFIX):
        return issue("ConfigurationConflict", "executionRoleArn must have a role name with "
                     f"prefix '{ROLE_PREFIX}'")
    if facts.hyperpod_clusters == 0:
        return issue("ConfigurationConflict", "No SageMaker HyperPod cluster is orchestrated "
                     "by this EKS cluster; the inference operator runs only on HyperPod.")
    if facts.addon_status.get("cert-manager") != "ACTIVE":
        return issue("K8sResourceNotFound", "certificates.cert-manager.io was not found: "
                     "install the cert-manager add-on and wait until it is ACTIVE first.",
                     "cert-manager")
    return None


def running_issue(addon: dict[str, Any], facts: ClusterFacts, issuer: str) -> Issue | None:
    """Why the installed operator does not run (DEGRADED), None when it does."""
    for name, (driver, friendly) in CSI_ADDONS.items():
        if facts.addon_status.get(name) in (None, "DELETING"):
            return issue("InsufficientNumberOfReplicas",
                         f"init container check-csi-drivers: {friendly} not installed "
                         f"(missing CSIDriver {driver}).", SERVICE_ACCOUNT)
    config = config_of(addon)
    role_arn, cluster_arn = str(config.get("executionRoleArn")), \
        str(config.get("hyperpodClusterArn"))
    cluster = cluster_arn.rsplit("/", 1)[-1]
    if not _web_identity_trusted(role_arn, issuer):
        return issue("AddonPermissionFailure",
                     f"failed to enable inference watcher for HyperPod cluster {cluster}: "
                     "operation error SageMaker: UpdateClusterInference, get identity: get "
                     "credentials: failed to refresh cached credentials, operation error STS: "
                     "AssumeRoleWithWebIdentity, https response error StatusCode: 403, api "
                     "error AccessDenied: Not authorized to perform "
                     "sts:AssumeRoleWithWebIdentity", SERVICE_ACCOUNT)
    docs = entity_documents([_role(role_arn)])
    if not allows(docs, "sagemaker:UpdateClusterInference", cluster_arn, CONTEXT):
        return issue("AddonPermissionFailure",
                     f"failed to enable inference watcher for HyperPod cluster {cluster}: "
                     "operation error SageMaker: UpdateClusterInference, api error "
                     f"AccessDeniedException: User: {_assumed(role_arn)} is not authorized to "
                     f"perform: sagemaker:UpdateClusterInference on resource: {cluster_arn}",
                     SERVICE_ACCOUNT)
    return None


def _assumed(role_arn: str) -> str:
    name = role_arn.rsplit("/", 1)[-1]
    return f"arn:aws:sts::{ACCOUNT}:assumed-role/{name}/hyperpod-inference-operator"


def _provider_exists(path: str) -> bool:
    iam = get_backend("iam")[ACCOUNT]["aws"]
    try:
        return iam.get_open_id_connect_provider(
            f"arn:aws:iam::{ACCOUNT}:oidc-provider/{path}") is not None
    except Exception:  # moto's NotFound
        return False


def _web_identity_trusted(role_arn: str, issuer: str) -> bool:
    """STS AssumeRoleWithWebIdentity succeeds: the role exists, its trust names the cluster's
    registered provider for this action, and its conditions admit the service account's token
    (sub and, when present, aud)."""
    role = _role(role_arn)
    path = issuer.removeprefix("https://")
    if role is None or not path or not _provider_exists(path):
        return False
    token = {f"{path}:sub": f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}",
             f"{path}:aud": "sts.amazonaws.com"}
    provider = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{path}"
    for stmt in as_list(parse_document(str(role.assume_role_policy_document)).get("Statement")):
        principal = stmt.get("Principal") if isinstance(stmt, dict) else None
        federated = as_list(principal.get("Federated")) if isinstance(principal, dict) else []
        if (stmt.get("Effect") == "Allow" and provider in federated
                and any(wildcard(a, "sts:AssumeRoleWithWebIdentity", ignore_case=True)
                        for a in as_list(stmt.get("Action")))
                and _token_matches(stmt.get("Condition") or {}, token)):
            return True
    return False


def _token_matches(condition: dict[str, Any], token: dict[str, str]) -> bool:
    for operator, block in condition.items():
        if operator not in ("StringEquals", "StringLike") or not isinstance(block, dict):
            return False   # stricter: other operators are not what the docs show
        for key, wanted in block.items():
            value = token.get(key)
            if value is None or not any(
                    (wildcard(w, value) if operator == "StringLike" else w == value)
                    for w in as_list(wanted)):
                return False
    return True
