"""Shared pieces of rendered manifests: labels, the version annotation, RBAC and DaemonSets."""

from __future__ import annotations

from typing import Any

Manifest = dict[str, Any]
UNIT_LABEL = "podplane.io/unit"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
VERSION_ANNOTATION = "podplane.io/version"
RBAC = "rbac.authorization.k8s.io"
# Tolerated by the chart's system DaemonSets so a node HyperPod marked unhealthy keeps them.
UNHEALTHY_TOLERATION = {"key": "sagemaker.amazonaws.com/node-health-status", "operator": "Equal",
                        "value": "Unschedulable", "effect": "NoSchedule"}
DEVICE_PLUGINS_DIR = "/var/lib/kubelet/device-plugins"


def unit_labels(unit: str) -> dict[str, str]:
    return {UNIT_LABEL: unit, MANAGED_LABEL: "podplane"}


def meta(name: str, unit: str, version: str, namespace: str | None = None,
         labels: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "labels": {**(labels or {}), **unit_labels(unit)},
                           "annotations": {VERSION_ANNOTATION: version}}
    if namespace:
        out["namespace"] = namespace
    return out


def namespace(name: str, unit: str, version: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name, unit, version)}


def service_account(name: str, ns: str, unit: str, version: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, unit, version, ns)}


def rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, list[str]]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def cluster_role(name: str, unit: str, version: str, rules: list[dict[str, list[str]]]
                 ) -> Manifest:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
            "metadata": meta(name, unit, version), "rules": rules}


def sa_subject(name: str, ns: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": ns}


def user_subject(name: str) -> dict[str, str]:
    return {"kind": "User", "name": name, "apiGroup": RBAC}


def cluster_role_binding(name: str, unit: str, version: str, role: str,
                         subjects: list[dict[str, str]]) -> Manifest:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
            "metadata": meta(name, unit, version),
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
            "subjects": subjects}


def role(name: str, ns: str, unit: str, version: str, rules: list[dict[str, list[str]]]
         ) -> Manifest:
    return {"apiVersion": f"{RBAC}/v1", "kind": "Role",
            "metadata": meta(name, unit, version, ns), "rules": rules}


def role_binding(name: str, ns: str, unit: str, version: str, ref: tuple[str, str],
                 subjects: list[dict[str, str]]) -> Manifest:
    """A RoleBinding in `ns` to the (kind, name) Role or ClusterRole."""
    return {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
            "metadata": meta(name, unit, version, ns),
            "roleRef": {"apiGroup": RBAC, "kind": ref[0], "name": ref[1]},
            "subjects": subjects}


def service(name: str, ns: str, unit: str, version: str, selector: dict[str, str],
            ports: list[tuple[str, int, int]]) -> Manifest:
    """A ClusterIP Service; ports as (name, port, targetPort)."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": meta(name, unit, version, ns, labels=dict(selector)),
            "spec": {"selector": selector, "ports": [
                {"name": n, "port": port, "targetPort": target, "protocol": "TCP"}
                for n, port, target in ports]}}


def api_service(name: str, unit: str, version: str, backend: tuple[str, str]) -> Manifest:
    """An aggregated APIService `v<version>.<group>` served by the (namespace, name)
    Service on 443 (Kubernetes docs, "Configure the Aggregation Layer")."""
    api_version, _, group = name.partition(".")
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": meta(name, unit, version),
            "spec": {"service": {"namespace": backend[0], "name": backend[1], "port": 443},
                     "group": group, "version": api_version,
                     "groupPriorityMinimum": 100, "versionPriority": 100}}


def host_paths(paths: dict[str, tuple[str, str, bool]]
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(volumes, volumeMounts) for {volume: (host path, mount path, read-only)}."""
    volumes = [{"name": name, "hostPath": {"path": host}}
               for name, (host, _, _) in paths.items()]
    mounts: list[dict[str, Any]] = []
    for name, (_, mount, read_only) in paths.items():
        mounts.append({"name": name, "mountPath": mount, **({"readOnly": True}
                                                              if read_only else {})})
    return volumes, mounts


def env_from_field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def daemonset(name: str, ns: str, unit: str, version: str, *, pod: dict[str, Any],
              labels: dict[str, str] | None = None) -> Manifest:
    """A rolling-update DaemonSet. Its selector stays `app.kubernetes.io/name: <name>` (what
    earlier podplane versions installed): a DaemonSet's selector is immutable, so changing it
    would make the apply fail on clusters that have it; the chart's labels go on top."""
    selector = {"app.kubernetes.io/name": name}
    pod_labels = {**(labels or {}), **selector, **unit_labels(unit)}
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": meta(name, unit, version, ns, labels=labels),
        "spec": {"selector": {"matchLabels": selector},
                 "updateStrategy": {"type": "RollingUpdate"},
                 "template": {"metadata": {"labels": pod_labels}, "spec": pod}},
    }


def deployment(name: str, ns: str, unit: str, version: str, *, selector: dict[str, str],
               pod: dict[str, Any], labels: dict[str, str] | None = None,
               pod_annotations: dict[str, str] | None = None, replicas: int = 1) -> Manifest:
    """A Deployment whose pods carry the selector, the chart's labels and the unit's labels."""
    pod_meta: dict[str, Any] = {"labels": {**(labels or {}), **selector, **unit_labels(unit)}}
    if pod_annotations:
        pod_meta["annotations"] = pod_annotations
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": meta(name, unit, version, ns, labels={**(labels or {}), **selector}),
        "spec": {"replicas": replicas, "selector": {"matchLabels": selector},
                 "template": {"metadata": pod_meta, "spec": pod}},
    }
