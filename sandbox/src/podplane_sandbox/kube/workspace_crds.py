"""The workspace.jupyter.org CRDs the `amazon-sagemaker-spaces` add-on installs.

Written here from the Go types of jupyter-infra/jupyter-k8s (`api/v1alpha1/workspace_types.go`,
`workspacetemplate_types.go`, `workspaceaccessstrategy_types.go`: json names, `omitempty` for
optional members, the kubebuilder markers for enums, minimums, lengths and item counts), not
from the generated YAML. Core types they embed (ResourceRequirements, Affinity, Toleration,
EnvVar, Probe, Container, security contexts) are kept open: the API server prunes nothing a
client sends there. Status is open too (the operator writes it).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
GROUP, VERSION = "workspace.jupyter.org", "v1alpha1"
OWNERSHIP = ["Public", "OwnerOnly"]


def _open() -> Obj:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _str(**limits: Any) -> Obj:
    return {"type": "string", **limits}


def _list(item: Obj, **limits: Any) -> Obj:
    return {"type": "array", "items": item, **limits}


def _obj(props: Obj, *required: str) -> Obj:
    out: Obj = {"type": "object", "properties": props}
    if required:
        out["required"] = list(required)
    return out


STR_MAP: Obj = {"type": "object", "additionalProperties": {"type": "string"}}
QUANTITY: Obj = {"x-kubernetes-int-or-string": True,
                 "anyOf": [{"type": "integer"}, {"type": "string"}]}
VOLUME = _obj({"name": _str(), "persistentVolumeClaimName": _str(), "mountPath": _str()},
              "name", "persistentVolumeClaimName", "mountPath")
CONTAINER_CONFIG = _obj({"command": _list(_str()), "args": _list(_str())})
REF = _obj({"name": _str(), "namespace": _str()}, "name")
IDLE = _obj({
    "enabled": {"type": "boolean"},
    "idleTimeoutInMinutes": {"type": "integer", "minimum": 1},
    "detection": _obj({"httpGet": _obj({
        "path": _str(), "port": QUANTITY, "host": _str(), "scheme": _str(),
        "httpHeaders": _list(_open()),
        "transport": _str(enum=["podExec", "network"]),
        "lastActivityTimestamp": _obj({"responseBodyPath": _str(),
                                       "format": _str(enum=["RFC3339", "unix"])})})}),
}, "enabled", "idleTimeoutInMinutes", "detection")

WORKSPACE_SPEC = _obj({
    "displayName": _str(), "image": _str(),
    "desiredStatus": _str(enum=["Running", "Stopped"]),
    "ownershipType": _str(enum=OWNERSHIP), "accessType": _str(enum=OWNERSHIP),
    "resources": _open(),
    "storage": _obj({"storageClassName": _str(), "size": QUANTITY, "mountPath": _str()}),
    "volumes": _list(VOLUME), "containerConfig": CONTAINER_CONFIG,
    "env": _list(_open()), "nodeSelector": STR_MAP, "affinity": _open(),
    "tolerations": _list(_open()), "lifecycle": _open(), "readinessProbe": _open(),
    "accessStrategy": REF, "templateRef": REF, "idleShutdown": IDLE,
    "appType": _str(), "serviceAccountName": _str(),
    "podSecurityContext": _open(), "containerSecurityContext": _open(),
    "initContainers": _list(_open(), maxItems=10),
}, "displayName")

STORAGE_CONFIG = _obj({"defaultSize": QUANTITY, "minSize": QUANTITY, "maxSize": QUANTITY,
                       "defaultStorageClassName": _str(), "defaultMountPath": _str()})
KEYED = _obj({"key": _str(minLength=1), "value": _str()}, "key", "value")
REQUIREMENT = _obj({"required": {"type": "boolean"}, "regex": _str()})
TEMPLATE_SPEC = _obj({
    "displayName": _str(minLength=1, maxLength=100), "description": _str(maxLength=500),
    "defaultImage": _str(minLength=1, maxLength=500),
    "allowedImages": _list(_str(), maxItems=50), "allowCustomImages": {"type": "boolean"},
    "defaultResources": _open(),
    "resourceBounds": _obj({"resources": {"type": "object", "additionalProperties": _obj(
        {"min": QUANTITY, "max": QUANTITY}, "min", "max")}}),
    "primaryStorage": STORAGE_CONFIG, "defaultContainerConfig": CONTAINER_CONFIG,
    "baseEnv": _list(_open(), maxItems=50),
    "envRequirements": _list({**REQUIREMENT, "required": ["name"], "properties": {
        **REQUIREMENT["properties"], "name": _str(minLength=1)}}, maxItems=50),
    "allowSecondaryStorages": {"type": "boolean"},
    "defaultVolumes": _list(VOLUME, maxItems=10), "defaultNodeSelector": STR_MAP,
    "defaultAffinity": _open(), "defaultTolerations": _list(_open()),
    "defaultOwnershipType": _str(enum=OWNERSHIP), "defaultAccessType": _str(enum=OWNERSHIP),
    "baseLabels": _list(KEYED, maxItems=50),
    "labelRequirements": _list({**REQUIREMENT, "required": ["key"], "properties": {
        **REQUIREMENT["properties"], "key": _str(minLength=1)}}, maxItems=50),
    "defaultIdleShutdown": IDLE, "idleShutdownOverrides": _open(),
    "defaultAccessStrategy": REF, "defaultLifecycle": _open(),
    "defaultReadinessProbe": _open(), "defaultPodSecurityContext": _open(),
    "defaultContainerSecurityContext": _open(),
    "defaultInitContainers": _list(_open(), maxItems=10),
    "allowCustomInitContainers": {"type": "boolean"}, "appType": _str(),
}, "displayName", "defaultImage")

RESOURCE_TEMPLATE = _obj({"kind": _str(), "apiVersion": _str(), "namePrefix": _str(),
                          "template": _str()}, "kind", "apiVersion", "namePrefix", "template")
ACCESS_SPEC = _obj({
    "displayName": _str(), "accessResourceTemplates": _list(RESOURCE_TEMPLATE),
    "accessURLTemplate": _str(), "applicationBasePathTemplate": _str(),
    "bearerAuthURLTemplate": _str(), "createConnectionHandler": _str(),
    "createConnectionHandlerMap": STR_MAP, "podEventsHandler": _str(),
    "createConnectionContext": STR_MAP, "podEventsContext": STR_MAP,
    "deploymentModifications": _open(), "accessStartupProbe": _open(),
}, "displayName")

KINDS = (("workspaces", "Workspace", WORKSPACE_SPEC),
         ("workspacetemplates", "WorkspaceTemplate", TEMPLATE_SPEC),
         ("workspaceaccessstrategies", "WorkspaceAccessStrategy", ACCESS_SPEC))


def workspace_crds() -> list[Obj]:
    """The three CRDs, namespaced, served and stored at v1alpha1 with a status subresource."""
    return [_crd(plural, kind, spec) for plural, kind, spec in KINDS]


def _crd(plural: str, kind: str, spec: Obj) -> Obj:
    schema = _obj({"apiVersion": _str(), "kind": _str(), "metadata": {"type": "object"},
                   "spec": spec, "status": _open()}, "spec")
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                               "listKind": f"{kind}List"},
                     "versions": [{"name": VERSION, "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": schema}}]}}
