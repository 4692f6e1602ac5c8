"""The HyperPod inference operator as a feature: an OIDC provider for the cluster's issuer, the
operator's execution role, then the EKS add-on that runs the operator.

Sources:
- Add-on name `amazon-sagemaker-hyperpod-inference`, its configuration values
  (`executionRoleArn`, `hyperpodClusterArn`, `tlsCertificateS3Bucket`) and the operator's
  service account `hyperpod-inference-system/hyperpod-inference-controller-manager`:
  aws/sagemaker-hyperpod-cli @ 011ca927, helm_chart/HyperPodHelmChart/charts/
  inference-operator/migration/helm_to_addon.sh (the official Helm-to-add-on migration).
- The execution role's name must start with `SageMakerHyperPodInference` when the operator is
  an add-on (same chart, templates/_validateRequiredValues.tpl, `isAddOn`: the managed policy's
  restrictions key on that prefix).
- Trust: the operator takes the role with IRSA (the chart's config/rbac/service_account.yaml
  annotates `eks.amazonaws.com/role-arn`), so the role trusts the cluster's OIDC provider for
  that service account (`sts:AssumeRoleWithWebIdentity`, `aud` sts.amazonaws.com) and
  SageMaker: https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-ts-trust.html
  and the setup page https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-setup.html.
  IRSA needs the issuer registered as an IAM OIDC provider, so the feature makes one (tagged)
  unless one exists.
- Policy (least privilege instead of the managed AmazonSageMakerHyperPodInferenceAccess, which
  spans every bucket and cluster): at start the operator calls SageMaker
  `UpdateClusterInference` on its cluster (the error the trust troubleshooting page quotes);
  it reads models from the model source (here the cluster's bucket, `models/` prefix only);
  it writes, reads and deletes the endpoints' TLS certificates in `tlsCertificateS3Bucket`
  and tags them (inference release notes, v3.0: the execution role needs tagging permissions;
  the migration script's TLSBucketsAccess statement: Get, Put, PutObjectTagging, Delete), under
  the `inference-tls/` prefix of the same bucket.
"""

from __future__ import annotations

import json
from typing import Any

from podplane.domain.features.model import FEATURE_TAG, Resource
from podplane.domain.names import derived_name

Shape = dict[str, Any]
NAME = "inference-operator"
ADDON = "amazon-sagemaker-hyperpod-inference"
NAMESPACE = "hyperpod-inference-system"
SERVICE_ACCOUNT = "hyperpod-inference-controller-manager"
ROLE_PREFIX = "SageMakerHyperPodInference"
AUDIENCE = "sts.amazonaws.com"
MODEL_PREFIX = "models/"
TLS_PREFIX = "inference-tls/"
# Add-ons the operator's init container checks before it starts (chart config/manager/
# manager.yaml, `require_csidriver s3.csi.aws.com` and `fsx.csi.aws.com`).
S3_CSI_ADDON = "aws-mountpoint-s3-csi-driver"
FSX_CSI_ADDON = "aws-fsx-csi-driver"


def role_name(cluster: str, region: str) -> str:
    return derived_name(f"{ROLE_PREFIX}-podplane-{cluster}", "exec", 64, region)


def provider_path(issuer: str) -> str:
    """`https://oidc.eks.<region>.amazonaws.com/id/<ID>` -> the IAM provider's name part."""
    return issuer.removeprefix("https://")


def trust(account: str, issuer: str) -> Shape:
    path = provider_path(issuer)
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow",
         "Principal": {"Federated": f"arn:aws:iam::{account}:oidc-provider/{path}"},
         "Action": "sts:AssumeRoleWithWebIdentity",
         "Condition": {"StringEquals": {
             f"{path}:sub": f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}",
             f"{path}:aud": AUDIENCE}}},
        {"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"},
         "Action": "sts:AssumeRole"}]}


def policy(bucket: str, hyperpod_arn: str) -> Shape:
    """No `*` action and no `*` resource: one cluster, one bucket's two prefixes."""
    objects = f"arn:aws:s3:::{bucket}"
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "OperatorCluster", "Effect": "Allow",
         "Action": ["sagemaker:DescribeCluster", "sagemaker:UpdateClusterInference"],
         "Resource": hyperpod_arn},
        {"Sid": "ReadModels", "Effect": "Allow", "Action": "s3:GetObject",
         "Resource": f"{objects}/{MODEL_PREFIX}*"},
        {"Sid": "ListModelsAndCertificates", "Effect": "Allow", "Action": "s3:ListBucket",
         "Resource": objects,
         "Condition": {"StringLike": {"s3:prefix": [f"{MODEL_PREFIX}*", f"{TLS_PREFIX}*"]}}},
        {"Sid": "TlsCertificates", "Effect": "Allow",
         "Action": ["s3:DeleteObject", "s3:GetObject", "s3:PutObject", "s3:PutObjectTagging"],
         "Resource": f"{objects}/{TLS_PREFIX}*"}]}


def configuration(role_arn: str, hyperpod_arn: str, bucket: str) -> str:
    """The add-on's configuration values, as EKS stores them (a JSON string), in the canonical
    form live values are compared in (services/features/live.py, `same_configuration`)."""
    return json.dumps({"executionRoleArn": role_arn, "hyperpodClusterArn": hyperpod_arn,
                       "tlsCertificateS3Bucket": f"s3://{bucket}"}, sort_keys=True,
                      separators=(",", ":"))


def resources(on: bool, cluster: str, account: str, region: str, bucket: str,
              hyperpod_arn: str, issuer: str) -> list[Resource]:
    """Provider, role, add-on: created in that order, deleted in reverse."""
    name = role_name(cluster, region)
    arn = f"arn:aws:iam::{account}:role/{name}"
    tags = {FEATURE_TAG: NAME, "podplane:cluster": cluster}
    return [
        # podplane:managed too: cluster delete removes the providers podplane made for it
        # (services/clusters/identity.py)
        Resource(NAME, "oidc-provider", f"oidc provider {provider_path(issuer)}",
                 {"url": issuer, "clientIds": [AUDIENCE],
                  "tags": {**tags, "podplane:managed": "true"}}, on),
        Resource(NAME, "iam-role", f"iam role {name}",
                 {"name": name, "trust": trust(account, issuer),
                  "policy": policy(bucket, hyperpod_arn), "tags": tags}, on),
        Resource(NAME, "eks-addon", f"eks addon {ADDON}",
                 {"addonName": ADDON, "tags": {FEATURE_TAG: NAME},
                  "configurationValues": configuration(arn, hyperpod_arn, bucket)}, on),
    ]
