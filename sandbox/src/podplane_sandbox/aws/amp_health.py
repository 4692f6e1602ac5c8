"""Whether the HyperPod observability add-on's collector can write to its Prometheus workspace.

The add-on (`amazon-sagemaker-hyperpod-observability`) is configured with
`ampWorkspace.{prometheusEndpoint, arn}` (aws/sagemaker-hyperpod-cli
src/sagemaker/hyperpod/observability/utils.py reads them back; awslabs/awsome-distributed-
training 1.architectures/7.sagemaker-hyperpod-eks/terraform-modules/hyperpod-eks-tf/modules/
observability/eks_addon.tf writes them), and its collector runs as
`hyperpod-observability/hyperpod-observability-operator-otel-collector` with a role given by
EKS Pod Identity that allows `aps:RemoteWrite` (the same module's iam_roles.tf). When that
chain is broken the sandbox shows the add-on DEGRADED with one `health.issues` entry (botocore
`eks` model, AddonIssue {code, message, resourceIds}; codes from AddonIssueCode):

- no workspace at that ARN (or one being deleted): ConfigurationConflict;
- no association for the collector, its role gone, or a role whose policies do not allow
  aps:RemoteWrite on the workspace: AddonPermissionFailure.

AWS documents no exact message for these; the sandbox is the strict side: the add-on is
re-checked on every tick while ACTIVE or DEGRADED, so it recovers once the chain is repaired.
"""

from __future__ import annotations

import json
from typing import Any

from moto.backends import get_backend

from podplane_sandbox.aws.amp import workspace_of
from podplane_sandbox.aws.iam_policy import allows, entity_documents
from podplane_sandbox.aws.world import ACCOUNT, World

ADDON = "amazon-sagemaker-hyperpod-observability"
COLLECTOR = ("hyperpod-observability", "hyperpod-observability-operator-otel-collector")
CONTEXT = {"aws:PrincipalAccount": ACCOUNT, "aws:ResourceAccount": ACCOUNT}
Issue = dict[str, Any]


def observability_issue(w: World, eks_state: dict[str, Any], addon: dict[str, Any]
                        ) -> Issue | None:
    if addon.get("addonName") != ADDON:
        return None
    arn = _workspace_arn(addon.get("configurationValues"))
    if arn is None or workspace_of(w, arn) is None:
        return _issue("ConfigurationConflict", f"The Amazon Managed Service for Prometheus "
                      f"workspace {arn or '(none)'} named in ampWorkspace.arn does not exist.",
                      arn or "ampWorkspace")
    role_arn = _collector_role(eks_state, addon["clusterName"])
    if role_arn is None:
        return _issue("AddonPermissionFailure", "No Pod Identity association for service "
                      f"account {COLLECTOR[0]}/{COLLECTOR[1]}: the collector has no AWS "
                      "credentials to write metrics.", COLLECTOR[1])
    role = _role(role_arn)
    if role is None or not allows(entity_documents([role]), "aps:RemoteWrite", arn, CONTEXT):
        return _issue("AddonPermissionFailure", f"{role_arn} is not authorized to perform: "
                      f"aps:RemoteWrite on resource: {arn}"
                      + (" (the role does not exist)" if role is None else ""), role_arn)
    return None


def _issue(code: str, message: str, *resources: str) -> Issue:
    return {"code": code, "message": message, "resourceIds": list(resources)}


def _workspace_arn(values: Any) -> str | None:
    try:
        config = json.loads(values) if isinstance(values, str) else {}
    except json.JSONDecodeError:
        return None
    arn = ((config if isinstance(config, dict) else {}).get("ampWorkspace") or {}).get("arn")
    return arn if isinstance(arn, str) else None


def _collector_role(eks_state: dict[str, Any], cluster: str) -> str | None:
    for a in eks_state.get("pod_identity", {}).get(cluster, {}).values():
        if (a["namespace"], a["serviceAccount"]) == COLLECTOR:
            return str(a["roleArn"])
    return None


def _role(arn: str) -> Any:
    try:
        return get_backend("iam")[ACCOUNT]["aws"].get_role_by_arn(arn)
    except Exception:  # moto raises its NotFound: the role does not exist
        return None
