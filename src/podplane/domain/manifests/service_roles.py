"""RBAC HyperPod's service-linked role needs inside the cluster (it authenticates as the
Kubernetes User `hyperpod-service-linked-role`).

From the HyperPod dependencies chart (aws/sagemaker-hyperpod-cli @ 011ca927, chart 0.1.0):
`charts/job-auto-restart` (job auto-resume: read nodes and pods, delete pods, patch nodes,
manage PyTorchJobs and leases) and `charts/hyperpod-patching` (UpdateClusterSoftware drains
nodes: list pods, create evictions).
"""

from __future__ import annotations

from podplane.domain.manifests.common import (
    Manifest,
    cluster_role,
    cluster_role_binding,
    namespace,
    rule,
    service_account,
    user_subject,
)

SERVICE_USER = "hyperpod-service-linked-role"
NAMESPACE = "aws-hyperpod"


def job_auto_restart(version: str, region: str) -> list[Manifest]:
    unit, name = "hyperpod-job-auto-restart", "job-auto-restart"
    rules = [
        rule([""], ["nodes", "nodes/status", "pods", "pods/status"], ["get", "list", "watch"]),
        rule([""], ["pods"], ["delete", "deletecollection"]),
        rule([""], ["nodes", "nodes/status"], ["patch"]),
        rule(["", "events.k8s.io"], ["events"], ["create"]),
        rule(["kubeflow.org"], ["pytorchjobs", "pytorchjobs/status"],
             ["get", "list", "watch", "delete", "patch", "update", "describe"]),
        rule(["coordination.k8s.io"], ["leases"], ["get", "create", "update", "delete"]),
    ]
    return [
        namespace(NAMESPACE, unit, version),
        cluster_role(name, unit, version, rules),
        service_account(name, NAMESPACE, unit, version),
        cluster_role_binding(name, unit, version, name, [user_subject(SERVICE_USER)]),
    ]


def hyperpod_patching(version: str, region: str) -> list[Manifest]:
    unit = name = "hyperpod-patching"
    rules = [rule([""], ["pods"], ["list"]), rule([""], ["pods/eviction"], ["create"])]
    return [
        cluster_role(name, unit, version, rules),
        cluster_role_binding(name, unit, version, name, [user_subject(SERVICE_USER)]),
    ]
