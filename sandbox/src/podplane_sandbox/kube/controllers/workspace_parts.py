"""What the workspace operator builds for a Workspace, from jupyter-infra/jupyter-k8s
`internal/controller`: names and labels (`constants.go` GenerateDeploymentName,
GenerateServiceName, GeneratePVCName, GenerateLabels), the Deployment (`deployment_builder.go`:
one replica, Recreate, container `workspace` on port 8888 named `http`, requests 100m/128Mi by
default, the home PVC as volume `workspace-storage` at the storage mountPath, default
/home/jovyan, each spec.volumes[] claim at its mountPath), the ClusterIP Service
(`service_builder.go`: port 8888 `http`), the PVC (`pvc_builder.go`: ReadWriteOnce, size
default 10Gi, the storage class when given, owned by the Workspace), the conditions
(`conditions.go`, `status_manager.go`); its webhook is workspace_webhook.py.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.framework import owner_ref
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
WORKSPACES = "workspace.jupyter.org/workspaces"
PORT, HOME = 8888, "/home/jovyan"
STORAGE_VOLUME = "workspace-storage"


def names(ws: Obj) -> tuple[str, str, str]:
    n = ws["metadata"]["name"]
    return f"workspace-{n}", f"workspace-{n}-service", f"workspace-{n}-pvc"


def labels(ws: Obj) -> dict[str, str]:
    return {"app": "jupyter", "workspace.jupyter.org/workspace-name": ws["metadata"]["name"],
            "workspace.jupyter.org/component": "workspace"}


def _meta(ws: Obj, name: str) -> Obj:
    return {"name": name, "namespace": ws["metadata"]["namespace"], "labels": labels(ws),
            "ownerReferences": [owner_ref(ws)]}


def pvc(ws: Obj) -> Obj | None:
    storage = ws["spec"].get("storage")
    if storage is None:
        return None
    spec: Obj = {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": str(storage.get("size") or "10Gi")}}}
    if storage.get("storageClassName"):
        spec["storageClassName"] = storage["storageClassName"]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": _meta(ws, names(ws)[2]), "spec": spec}


def service(ws: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(ws, names(ws)[1]),
            "spec": {"type": "ClusterIP", "selector": labels(ws),
                     "ports": [{"name": "http", "port": PORT, "targetPort": PORT,
                                "protocol": "TCP"}]}}


def deployment(ws: Obj, image: str) -> Obj:
    spec = ws["spec"]
    pod: Obj = {"containers": [_container(ws, image)], "volumes": _volumes(ws)}
    for key in ("nodeSelector", "affinity", "tolerations", "serviceAccountName",
                "initContainers"):
        if spec.get(key):
            pod[key] = clone(spec[key])
    if spec.get("podSecurityContext"):
        pod["securityContext"] = clone(spec["podSecurityContext"])
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(ws, names(ws)[0]),
            "spec": {"replicas": 1, "strategy": {"type": "Recreate"},
                     "selector": {"matchLabels": labels(ws)},
                     "template": {"metadata": {"labels": labels(ws)}, "spec": pod}}}


def _container(ws: Obj, image: str) -> Obj:
    spec = ws["spec"]
    config = spec.get("containerConfig") or {}
    resources = clone(spec.get("resources") or {})
    resources.setdefault("requests", {"cpu": "100m", "memory": "128Mi"})
    c: Obj = {"name": "workspace", "image": image, "resources": resources,
              "ports": [{"name": "http", "containerPort": PORT, "protocol": "TCP"}],
              "volumeMounts": _mounts(ws)}
    for key, value in (("command", config.get("command")), ("args", config.get("args")),
                       ("env", spec.get("env")), ("lifecycle", spec.get("lifecycle")),
                       ("readinessProbe", spec.get("readinessProbe")),
                       ("securityContext", spec.get("containerSecurityContext"))):
        if value:
            c[key] = clone(value)
    return c


def _volumes(ws: Obj) -> list[Obj]:
    out = []
    if ws["spec"].get("storage") is not None:
        out.append({"name": STORAGE_VOLUME, "persistentVolumeClaim": {"claimName": names(ws)[2]}})
    for v in ws["spec"].get("volumes") or []:
        if v["name"] != STORAGE_VOLUME:
            out.append({"name": v["name"],
                        "persistentVolumeClaim": {"claimName": v["persistentVolumeClaimName"]}})
    return out


def _mounts(ws: Obj) -> list[Obj]:
    out = []
    storage = ws["spec"].get("storage")
    if storage is not None:
        out.append({"name": STORAGE_VOLUME, "mountPath": storage.get("mountPath") or HOME})
    out += [{"name": v["name"], "mountPath": v["mountPath"]}
            for v in ws["spec"].get("volumes") or [] if v["name"] != STORAGE_VOLUME]
    return out


# -- status ------------------------------------------------------------------------------------
# (Available, Progressing, Stopped) per phase as status_manager.go writes them; Degraded is
# False/NoError in each, Deleting False with the desired state's reason.
PHASES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "starting": (("False", "{r}", "{m}"), ("True", "{r}", "{m}"),
                 ("False", "DesiredStateRunning", "Workspace is running")),
    "running": (("True", "ResourcesReady", "Workspace is ready"),
                ("False", "ResourcesReady", "Workspace is ready"),
                ("False", "DesiredStateRunning", "Workspace is running")),
    "stopping": (("False", "DesiredStateStopped", "Desired status is Stopped"),
                 ("True", "DesiredStateStopped", "Desired status is Stopped"),
                 ("False", "{r}", "{m}")),
    "stopped": (("False", "DesiredStateStopped", "Workspace is stopped"),
                ("False", "DesiredStateStopped", "Workspace is stopped"),
                ("True", "AllResourcesStopped", "Workspace is stopped")),
}


def conditions(old: list[Obj], phase: str, now: str, reason: str = "",
               message: str = "") -> list[Obj]:
    rows = [(t, st.format(r=reason, m=message), why.format(r=reason, m=message),
             text.format(r=reason, m=message))
            for t, (st, why, text) in zip(("Available", "Progressing", "Stopped"), PHASES[phase],
                                          strict=True)]
    desired = "DesiredStateStopped" if phase in ("stopping", "stopped") else "DesiredStateRunning"
    rows += [("Degraded", "False", "NoError", "No errors detected"),
             ("Deleting", "False", desired, "Workspace is " + (
                 "running" if desired == "DesiredStateRunning" else phase))]
    return [_condition(old, *row, now) for row in rows]


def deleting(old: list[Obj], now: str) -> list[Obj]:
    kept = [c for c in old if c.get("type") != "Deleting"]
    return kept + [_condition(old, "Deleting", "True", "DeletionInProgress",
                              "Workspace is being deleted", now)]


def _condition(old: list[Obj], kind: str, status: str, reason: str, message: str,
               now: str) -> Obj:
    before = next((c for c in old if c.get("type") == kind), None)
    since = before["lastTransitionTime"] if before and before.get("status") == status else now
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": since}
