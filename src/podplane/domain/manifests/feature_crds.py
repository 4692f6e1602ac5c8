"""Compact structural CRDs for the KubeRay and KEDA features (the approach of ADR 0006).

Identity (group, names, scope, versions served/stored, subresources) and the required fields
of `spec` are upstream's: ray-project/kuberay `helm-chart/kuberay-operator/crds/` (v1.7.0) and
kedacore/keda `config/crd/bases/` (v2.20.2), as stored in ../shared/crds (a test compares
them). The bodies are left open (`x-kubernetes-preserve-unknown-fields`): the operators check
their own objects, and upstream's generated schemas weigh up to 1.4 MB apiece.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.domain.manifests.common import Manifest, meta


@dataclass(frozen=True)
class CrdIdentity:
    group: str
    kind: str
    plural: str
    scope: str
    versions: tuple[tuple[str, bool], ...]    # (name, storage); every one is served
    spec_required: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    root_required: tuple[str, ...] = ()
    deprecated: tuple[str, ...] = ()


# upstream's deprecated v1alpha1 versions require other spec fields than v1
OLD_VERSION_REQUIRED: dict[tuple[str, str], tuple[str, ...]] = {
    ("RayJob", "v1alpha1"): ("entrypoint",), ("RayService", "v1alpha1"): ()}
RAY = "ray.io"
KEDA = "keda.sh"
V1_AND_ALPHA = (("v1", True), ("v1alpha1", False))
KUBERAY_CRDS = (
    CrdIdentity(RAY, "RayCluster", "rayclusters", "Namespaced", V1_AND_ALPHA,
                ("headGroupSpec",), categories=("all",), deprecated=("v1alpha1",)),
    CrdIdentity(RAY, "RayJob", "rayjobs", "Namespaced", V1_AND_ALPHA, categories=("all",),
                deprecated=("v1alpha1",)),
    CrdIdentity(RAY, "RayService", "rayservices", "Namespaced", V1_AND_ALPHA,
                ("rayClusterConfig",), categories=("all",), deprecated=("v1alpha1",)),
    CrdIdentity(RAY, "RayCronJob", "raycronjobs", "Namespaced", (("v1", True),),
                ("jobTemplate", "schedule"), categories=("all",)),
)
KEDA_CRDS = (
    CrdIdentity(KEDA, "ScaledObject", "scaledobjects", "Namespaced", (("v1alpha1", True),),
                ("scaleTargetRef", "triggers"), ("so",), root_required=("spec",)),
    CrdIdentity(KEDA, "ScaledJob", "scaledjobs", "Namespaced", (("v1alpha1", True),),
                ("jobTargetRef", "triggers"), ("sj",)),
    CrdIdentity(KEDA, "TriggerAuthentication", "triggerauthentications", "Namespaced",
                (("v1alpha1", True),), short_names=("ta", "triggerauth"),
                root_required=("spec",)),
    CrdIdentity(KEDA, "ClusterTriggerAuthentication", "clustertriggerauthentications",
                "Cluster", (("v1alpha1", True),), short_names=("cta", "clustertriggerauth"),
                root_required=("spec",)),
)


def _schema(ident: CrdIdentity, version: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    required = OLD_VERSION_REQUIRED.get((ident.kind, version), ident.spec_required)
    if required:
        spec["required"] = list(required)
    root: dict[str, Any] = {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"}, "spec": spec,
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    if ident.root_required:
        root["required"] = list(ident.root_required)
    return root


def compact_crd(ident: CrdIdentity, unit: str, version: str) -> Manifest:
    singular = ident.kind.lower()
    names: dict[str, Any] = {"kind": ident.kind, "listKind": f"{ident.kind}List",
                             "plural": ident.plural, "singular": singular}
    if ident.short_names:
        names["shortNames"] = list(ident.short_names)
    if ident.categories:
        names["categories"] = list(ident.categories)
    versions = [{"name": name, "served": True, "storage": storage,
                 "subresources": {"status": {}},
                 **({"deprecated": True} if name in ident.deprecated else {}),
                 "schema": {"openAPIV3Schema": _schema(ident, name)}}
                for name, storage in ident.versions]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": meta(f"{ident.plural}.{ident.group}", unit, version),
            "spec": {"group": ident.group, "names": names, "scope": ident.scope,
                     "versions": versions}}
