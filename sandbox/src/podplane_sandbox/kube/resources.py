"""The resource types the emulator serves: built-ins plus kinds registered by CRDs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()  # every served version (CRDs); builtins serve one
    crd: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def key(self) -> str:
        return f"{self.group}/{self.plural}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def served_versions(self) -> tuple[str, ...]:
        return self.versions or (self.version,)

    def api_version_for(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    def schema_for(self, version: str) -> dict[str, Any] | None:
        for v in (self.crd or {}).get("spec", {}).get("versions", []):
            if v.get("name") == version:
                schema: dict[str, Any] | None = (v.get("schema") or {}).get("openAPIV3Schema")
                return schema
        return None

    def printer_columns(self, version: str) -> list[dict[str, Any]]:
        for v in (self.crd or {}).get("spec", {}).get("versions", []):
            if v.get("name") == version:
                return list(v.get("additionalPrinterColumns") or [])
        return []


def _rt(
    group: str,
    version: str,
    plural: str,
    kind: str,
    namespaced: bool = True,
    short: str = "",
    sub: str = "status",
    cats: str = "",
) -> ResourceType:
    return ResourceType(
        group,
        version,
        plural,
        kind,
        namespaced,
        tuple(short.split()),
        tuple(sub.split()),
        tuple(cats.split()),
    )


BUILTINS: list[ResourceType] = [
    _rt("", "v1", "namespaces", "Namespace", False, "ns", "status finalize"),
    _rt("", "v1", "nodes", "Node", False, "no", "status"),
    _rt("", "v1", "pods", "Pod", True, "po", "status log binding eviction", "all"),
    _rt("", "v1", "services", "Service", True, "svc", "status", "all"),
    _rt("", "v1", "endpoints", "Endpoints", True, "ep", ""),
    _rt("", "v1", "configmaps", "ConfigMap", True, "cm", ""),
    _rt("", "v1", "secrets", "Secret", True, "", ""),
    _rt("", "v1", "serviceaccounts", "ServiceAccount", True, "sa", ""),
    _rt("", "v1", "events", "Event", True, "ev", ""),
    _rt("", "v1", "persistentvolumes", "PersistentVolume", False, "pv", "status"),
    _rt("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, "pvc", "status"),
    _rt("", "v1", "limitranges", "LimitRange", True, "limits", ""),
    _rt("", "v1", "resourcequotas", "ResourceQuota", True, "quota", "status"),
    _rt("", "v1", "podtemplates", "PodTemplate", True, "", ""),
    _rt(
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        True,
        "rc",
        "status scale",
        "all",
    ),
    _rt("apps", "v1", "deployments", "Deployment", True, "deploy", "status scale", "all"),
    _rt("apps", "v1", "replicasets", "ReplicaSet", True, "rs", "status scale", "all"),
    _rt("apps", "v1", "statefulsets", "StatefulSet", True, "sts", "status scale", "all"),
    _rt("apps", "v1", "daemonsets", "DaemonSet", True, "ds", "status", "all"),
    _rt("apps", "v1", "controllerrevisions", "ControllerRevision", True, "", ""),
    _rt("batch", "v1", "jobs", "Job", True, "", "status", "all"),
    _rt("batch", "v1", "cronjobs", "CronJob", True, "cj", "status", "all"),
    _rt(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        True,
        "hpa",
        "status",
        "all",
    ),
    _rt("rbac.authorization.k8s.io", "v1", "roles", "Role", True, "", ""),
    _rt("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, "", ""),
    _rt("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, "", ""),
    _rt(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        False,
        "",
        "",
    ),
    _rt("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, "sc", ""),
    _rt("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, "", ""),
    _rt("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, "", "status"),
    _rt("networking.k8s.io", "v1", "ingresses", "Ingress", True, "ing", "status"),
    _rt("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, "", ""),
    _rt("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, "netpol", ""),
    _rt("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, "", ""),
    _rt("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, "", "status"),
    _rt("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, "pdb", "status"),
    _rt("coordination.k8s.io", "v1", "leases", "Lease", True, "", ""),
    _rt("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, "pc", ""),
    _rt("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False, "", ""),
    _rt(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        "crd crds",
        "status",
    ),
]


class Registry:
    """Lookup of resource types by (group, version, plural) and by kind."""

    def __init__(self) -> None:
        self._by_key: dict[str, ResourceType] = {}
        for rt in BUILTINS:
            self.add(rt)

    def add(self, rt: ResourceType) -> None:
        self._by_key[rt.key] = rt

    def remove(self, key: str) -> None:
        self._by_key.pop(key, None)

    def all(self) -> list[ResourceType]:
        return list(self._by_key.values())

    def by_key(self, key: str) -> ResourceType | None:
        return self._by_key.get(key)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        rt = self._by_key.get(f"{group}/{plural}" if group else plural)
        if rt is None or version not in rt.served_versions():
            return None
        return rt

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        for rt in self._by_key.values():
            if rt.group == group and rt.kind == kind and version in rt.served_versions():
                return rt
        return None

    def group_versions(self) -> dict[str, list[str]]:
        """group -> served versions, preferred first."""
        out: dict[str, list[str]] = {}
        for rt in self._by_key.values():
            versions = out.setdefault(rt.group, [])
            for v in rt.served_versions():
                if v not in versions:
                    versions.append(v)
        return out


def resource_type_from_crd(crd: dict[str, Any]) -> ResourceType:
    spec = crd["spec"]
    names = spec["names"]
    served = [v for v in spec.get("versions", []) if v.get("served", True)]
    storage = next((v for v in served if v.get("storage")), served[0] if served else {"name": "v1"})
    subresources: list[str] = []
    if any((v.get("subresources") or {}).get("status") is not None for v in served):
        subresources.append("status")
    if any((v.get("subresources") or {}).get("scale") is not None for v in served):
        subresources.append("scale")
    return ResourceType(
        group=spec["group"],
        version=storage["name"],
        plural=names["plural"],
        kind=names["kind"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        subresources=tuple(subresources),
        categories=tuple(names.get("categories") or ()),
        versions=tuple(v["name"] for v in served),
        crd=crd,
    )
