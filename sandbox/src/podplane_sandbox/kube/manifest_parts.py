"""Building blocks of add-on manifests: metadata with the add-on's bookkeeping annotation,
service accounts, namespaces, Deployments/DaemonSets and open CRDs (addon_manifests.py)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
ADDON = "sandbox.podplane.io/eks-addon"  # sandbox bookkeeping: which add-on applied it
EKS_ECR = "602401143452.dkr.ecr.{region}.amazonaws.com"


def meta_of(name: str, namespace: str | None, addon: str, version: str) -> Obj:
    meta: Obj = {"name": name,
                 "labels": {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "EKS"},
                 "annotations": {ADDON: f"{addon}@{version}"}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def pod_spec(name: str, image: str, account: str, host_network: bool = False) -> Obj:
    spec: Obj = {"serviceAccountName": account,
                 "containers": [{"name": name, "image": image}]}
    if host_network:
        # node agents start on not-ready nodes (they are what makes a node ready)
        spec.update(hostNetwork=True, tolerations=[{"operator": "Exists"}],
                    priorityClassName="system-node-critical")
    return spec


def workload(kind: str, name: str, ns: str, image: str, account: str, ctx: tuple[str, str],
              replicas: int = 1, app: str | None = None,
              pod_labels: dict[str, str] | None = None) -> Obj:
    selector = {"matchLabels": {"app.kubernetes.io/name": app or name}}
    template = {"metadata": {"labels": {"app.kubernetes.io/name": app or name,
                                        **(pod_labels or {})}},
                "spec": pod_spec(name, image, account, host_network=kind == "DaemonSet")}
    spec: Obj = {"selector": selector, "template": template}
    if kind == "Deployment":
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta_of(name, ns, *ctx),
            "spec": spec}


def account(name: str, ns: str, ctx: tuple[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta_of(name, ns, *ctx)}


def namespace_obj(name: str, ctx: tuple[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta_of(name, None, *ctx)}


def open_crd(group: str, plural: str, kind: str, ctx: tuple[str, str],
         scope: str = "Namespaced", version: str = "v1") -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": meta_of(f"{plural}.{group}", None, *ctx),
            "spec": {"group": group, "scope": scope,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                               "listKind": f"{kind}List"},
                     "versions": [{"name": version, "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True}}}]}}
