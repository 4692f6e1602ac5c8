"""HyperPod health monitoring agent (labels faulty nodes for auto-recovery) and deep checks."""

from __future__ import annotations

from podplane.domain.manifests.common import (
    HYPERPOD_NODES,
    Manifest,
    daemonset,
    meta,
    namespace,
    service_account,
)

NAMESPACE = "aws-hyperpod"
AGENT = "health-monitoring-agent"


def health_monitoring_agent(version: str) -> list[Manifest]:
    unit = "hyperpod-health-monitoring-agent"
    rules = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]},
             {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]}]
    return [
        namespace(NAMESPACE, unit, version),
        service_account(AGENT, NAMESPACE, unit, version),
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": meta(f"podplane-{AGENT}", unit, version), "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": meta(f"podplane-{AGENT}", unit, version),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": f"podplane-{AGENT}"},
         "subjects": [{"kind": "ServiceAccount", "name": AGENT, "namespace": NAMESPACE}]},
        daemonset(AGENT, NAMESPACE, unit, version,
                  image=f"public.ecr.aws/sagemaker/hyperpod-health-monitoring-agent:{version}",
                  node_selector=HYPERPOD_NODES, service_account_name=AGENT,
                  resources={"requests": {"cpu": "50m", "memory": "64Mi"},
                             "limits": {"memory": "256Mi"}}),
    ]


def deep_health_check(version: str) -> list[Manifest]:
    """The settings HyperPod's on-start deep health checks report into (which checks, where)."""
    unit = "hyperpod-deep-health-check"
    return [
        namespace(NAMESPACE, unit, version),
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": meta("deep-health-check", unit, version, NAMESPACE),
         "data": {"checks": "InstanceStress,InstanceConnectivity",
                  "on-failure": "replace"}},
    ]
