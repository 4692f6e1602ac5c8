"""Shared pieces of rendered manifests: labels, the version annotation, a DaemonSet skeleton."""

from __future__ import annotations

from typing import Any

Manifest = dict[str, Any]
UNIT_LABEL = "podplane.io/unit"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
VERSION_ANNOTATION = "podplane.io/version"
HYPERPOD_NODES = {"sagemaker.amazonaws.com/compute-type": "hyperpod"}
TOLERATE_ALL = [{"operator": "Exists"}]


def unit_labels(unit: str) -> dict[str, str]:
    return {UNIT_LABEL: unit, MANAGED_LABEL: "podplane"}


def meta(name: str, unit: str, version: str, namespace: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "labels": unit_labels(unit),
                           "annotations": {VERSION_ANNOTATION: version}}
    if namespace:
        out["namespace"] = namespace
    return out


def namespace(name: str, unit: str, version: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name, unit, version)}


def service_account(name: str, ns: str, unit: str, version: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, unit, version, ns)}


def daemonset(name: str, ns: str, unit: str, version: str, *, image: str,
              node_selector: dict[str, str], resources: dict[str, Any] | None = None,
              privileged: bool = False, service_account_name: str | None = None,
              args: list[str] | None = None) -> Manifest:
    selector = {"app.kubernetes.io/name": name}
    container: dict[str, Any] = {"name": name, "image": image}
    if args:
        container["args"] = args
    if resources:
        container["resources"] = resources
    if privileged:
        container["securityContext"] = {"privileged": True}
    pod: dict[str, Any] = {"nodeSelector": node_selector, "tolerations": TOLERATE_ALL,
                           "priorityClassName": "system-node-critical",
                           "containers": [container]}
    if service_account_name:
        pod["serviceAccountName"] = service_account_name
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta(name, unit, version, ns),
        "spec": {"selector": {"matchLabels": selector},
                 "updateStrategy": {"type": "RollingUpdate"},
                 "template": {"metadata": {"labels": {**selector, **unit_labels(unit)}},
                              "spec": pod}},
    }
