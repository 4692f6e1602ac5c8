"""HyperPod observability as a feature: an Amazon Managed Service for Prometheus workspace
(podplane's own, or an existing one by id that podplane never deletes), the IAM role the
add-on's collector gets through EKS Pod Identity, its association, and the
`amazon-sagemaker-hyperpod-observability` EKS add-on configured to write to the workspace.

Sources (docs/features.md cites them too):
- SageMaker docs, "Setting up the HyperPod observability add-on"
  (sagemaker-hyperpod-observability-addon-setup.html) and "Cluster metrics"
  (hyperpod-observability-cluster-metrics.html): the add-on, its Prometheus workspace, Pod
  Identity for the collector, metric categories and levels;
- awslabs/awsome-distributed-training, 1.architectures/7.sagemaker-hyperpod-eks/
  terraform-modules/hyperpod-eks-tf/modules/observability/: eks_addon.tf (the configuration
  values `ampWorkspace {prometheusEndpoint, arn}`, `metricsProvider.<category> {level,
  scrapeInterval: 30}`, `logging.enabled`, and the collector's service account
  `hyperpod-observability-operator-otel-collector`), iam_roles.tf (trust: pods.eks.amazonaws.com
  for sts:AssumeRole + sts:TagSession, scoped by aws:SourceAccount and aws:SourceArn = the EKS
  cluster; permission: aps:RemoteWrite), variables.tf (the default levels below);
- aws/sagemaker-hyperpod-cli src/sagemaker/hyperpod/observability/utils.py: `hyp` reads
  `ampWorkspace.prometheusEndpoint` back from DescribeAddon's configurationValues.

Least privilege: AWS's module grants aps:RemoteWrite on every workspace of the account
(`workspace/*`) and CloudWatch Logs actions for its optional logging; podplane grants
aps:RemoteWrite on this feature's one workspace and keeps logging off, so the role has no logs
permission at all. Amazon Managed Grafana (optional in AWS's setup) is not made here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from podplane.domain.errors import InvalidInput
from podplane.domain.features.model import FEATURE_TAG, Resource

Shape = dict[str, Any]
NAME = "hyperpod-observability"
ADDON = "amazon-sagemaker-hyperpod-observability"
NAMESPACE = "hyperpod-observability"
COLLECTOR = "hyperpod-observability-operator-otel-collector"
ROLE_PURPOSE = "hpobs"
CLUSTER_TAG = "podplane:cluster"
# AMP workspace ids are `ws-` and a UUID (botocore `amp` WorkspaceId; DescribeWorkspace).
WORKSPACE_ID = re.compile(r"ws-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SCRAPE_SECONDS = 30
# metricsProvider categories and the default levels of AWS's module (variables.tf); the
# inference category is BASIC there too.
LEVELS = {"trainingMetrics": "BASIC", "inferenceMetrics": "BASIC",
          "taskGovernanceMetrics": "DISABLED", "scalingMetrics": "DISABLED",
          "customMetrics": "BASIC", "nodeMetrics": "BASIC",
          "acceleratedComputeMetrics": "BASIC", "networkMetrics": "DISABLED"}


def check(settings: Shape) -> Shape:
    ws_id = settings["workspace_id"]
    if not isinstance(ws_id, str) or (ws_id and not WORKSPACE_ID.fullmatch(ws_id)):
        raise InvalidInput("workspace_id must be an Amazon Managed Service for Prometheus "
                           "workspace id (ws- and a UUID), or empty to let podplane create "
                           "one.", field="workspace_id")
    return settings


def alias(cluster: str) -> str:
    return f"podplane-{cluster}"[:100]   # WorkspaceAlias: 1-100 characters


def workspace(on: bool, settings: Shape, cluster: str) -> Resource:
    existing = settings.get("workspace_id") or ""
    if existing:
        return Resource(NAME, "amp-workspace", f"amp workspace {existing}",
                        {"workspaceId": existing}, on)
    return Resource(NAME, "amp-workspace", f"amp workspace {alias(cluster)}",
                    {"tags": {FEATURE_TAG: NAME, CLUSTER_TAG: cluster}}, on)


def trust(account: str, eks_arn: str) -> Shape:
    """EKS Pod Identity's principal, only for this account's EKS cluster."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "EksPodIdentity", "Effect": "Allow",
        "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
        "Condition": {"StringEquals": {"aws:SourceAccount": account,
                                       "aws:SourceArn": eks_arn}}}]}


def remote_write_policy(workspace_arn: str | None) -> Shape:
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "RemoteWriteToWorkspace", "Effect": "Allow", "Action": "aps:RemoteWrite",
        "Resource": workspace_arn}]}


def configuration(found: Shape | None) -> str:
    """The add-on's configurationValues, as canonical JSON (compared as text)."""
    ws = found or {}
    return canonical({
        "ampWorkspace": {"prometheusEndpoint": ws.get("prometheusEndpoint"),
                         "arn": ws.get("arn")},
        "metricsProvider": {k: {"level": v, "scrapeInterval": SCRAPE_SECONDS}
                            for k, v in LEVELS.items()},
        "logging": {"enabled": False}})


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def same_configuration(text: Any) -> Any:
    """A live configurationValues in canonical form (text that is not JSON stays as is)."""
    try:
        return canonical(json.loads(text)) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text


def resources(on: bool, settings: Shape, cluster: str, role: Shape, role_arn: str,
              found: Shape | None, pending_arn: str) -> list[Resource]:
    """Workspace, then the collector's role (`role`: name, tags), its association, then the
    add-on naming the workspace; disable removes them in reverse (the role last).
    `pending_arn` stands for a workspace not made yet, so the plan shows the policy must
    change (a None field would count as "not compared"); each step renders afresh, by when
    the workspace exists."""
    arn = (found or {}).get("arn") or pending_arn
    desired_role = {**role, "policy": remote_write_policy(arn)}
    return [
        workspace(on, settings, cluster),
        Resource(NAME, "iam-role", f"iam role {role['name']}", desired_role, on),
        Resource(NAME, "pod-identity", f"pod identity {NAMESPACE}/{COLLECTOR}",
                 {"namespace": NAMESPACE, "serviceAccount": COLLECTOR, "roleArn": role_arn},
                 on),
        Resource(NAME, "eks-addon", f"eks addon {ADDON}",
                 {"addonName": ADDON, "configurationValues": configuration(found),
                  "tags": {FEATURE_TAG: NAME}}, on),
    ]


def ours(ws: Shape, cluster: str) -> bool:
    tags = ws.get("tags") or {}
    return tags.get(FEATURE_TAG) == NAME and tags.get(CLUSTER_TAG) == cluster
