"""The workspace operator (jupyter-infra/jupyter-k8s) that the `amazon-sagemaker-spaces` add-on
runs, for workspace.jupyter.org/v1alpha1 Workspace. Sources, `internal/controller`:

- Nothing happens before the CRD exists and the operator's Deployment has a ready replica.
- `workspace_controller.go`: the finalizer `workspace.jupyter.org/workspace-protection` first.
- `state_machine.go` ReconcileDesiredState on spec.desiredStatus (unset = Running):
  Running: EnsurePVCExists (when spec.storage), EnsureDeploymentExists, EnsureServiceExists;
  until the Deployment is available the status is "starting" (ComputeNotReady), then
  "running" with the `WorkspaceRunning` event, deploymentName and serviceName.
  Stopped: EnsureDeploymentDeleted and EnsureServiceDeleted (the PVC stays: EnsurePVCDeleted
  is "used during workspace deletion, not stop"), "stopping" (ComputeNotStopped) until both
  are gone, then "stopped" with the `WorkspaceStopped` event and the names cleared.
- ReconcileDeletion: Deleting condition, CleanupAllResources deletes the Deployment, the
  Service *and the PVC* (resource_manager.go), then the finalizer goes; the home volume does
  not outlive its Workspace.
- Idle shutdown (`handleIdleShutdownForRunningWorkspace`, `idle_checker.go`,
  `idle_detectors.go`): for a running workspace with idleShutdown.enabled, every check
  interval (DefaultIdleCheckInterval, 5 minutes; AWS's setting is not published) the
  operator GETs detection.httpGet (path, port) and reads lastActivityTimestamp.responseBodyPath
  (default `lastActiveTimestamp`, RFC3339 or unix); once the last activity is at least
  idleTimeoutInMinutes old it records `IdleShutdown` and sets spec.desiredStatus Stopped.
  A 404 stops checking (permanent failure); other failures retry. No httpGet: no checks.
  The probe is answered by the fake Jupyter server (fake_jupyter.py) without counting as
  activity; it runs inside the pod (podExec transport), so it needs no token.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube import fake_jupyter
from podplane_sandbox.kube.controllers import workspace_parts as parts
from podplane_sandbox.kube.controllers import workspace_webhook
from podplane_sandbox.kube.controllers.framework import Controller, Key
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, parse_iso

Obj = dict[str, Any]
WORKSPACES = parts.WORKSPACES
OPERATOR = ("jupyter-k8s-system", "jupyter-k8s-controller-manager")
FINALIZER = "workspace.jupyter.org/workspace-protection"
# the system JupyterLab template's image (SageMaker docs "Customize add-on": defaultImage)
DEFAULT_IMAGE = "public.ecr.aws/sagemaker/sagemaker-distribution:latest-cpu"
POLL, CHECK_EVERY = 1.0, 300.0
OWNED = ("apps/deployments", "services", "persistentvolumeclaims")


def install(store: Any) -> None:
    store.admit.setdefault(WORKSPACES, []).append(workspace_webhook.admitter(store))
    store.admit.setdefault(workspace_webhook.TEMPLATES, []).append(
        workspace_webhook.template_admitter(store))


class Workspaces(Controller):
    primary = WORKSPACES

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        ns = meta.get("namespace", "")
        if event.rt_key == WORKSPACES:
            yield (ns, meta["name"])
        elif event.rt_key in OWNED:
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "Workspace":
                    yield (ns, ref["name"])
        if event.rt_key == "apps/deployments" and (ns, meta["name"]) == OPERATOR:
            yield from self.initial_keys()

    def initial_keys(self) -> Iterable[Key]:
        if self.ctx.store.registry.by_key(WORKSPACES) is None:
            return []
        return super().initial_keys()

    def reconcile(self, key: Key) -> float | None:
        if self.ctx.store.registry.by_key(WORKSPACES) is None or not self._operator_ready():
            return None
        ws = self.primary_obj(key)
        if ws is None:
            return None
        if ws["metadata"].get("deletionTimestamp"):
            return self._delete(ws)
        ws = self._finalizer(ws, add=True)
        if (ws["spec"].get("desiredStatus") or "Running") == "Stopped":
            return self._stop(ws)
        return self._run(ws)

    def _operator_ready(self) -> bool:
        dep = self.ctx.store.find("apps/deployments", *OPERATOR)
        return bool(((dep or {}).get("status") or {}).get("readyReplicas"))

    def _finalizer(self, ws: Obj, add: bool) -> Obj:
        have = list(ws["metadata"].get("finalizers") or [])
        want = [f for f in have if f != FINALIZER] + ([FINALIZER] if add else [])
        if want == have:
            return ws
        new = clone(ws)
        new["metadata"]["finalizers"] = want
        return self.ctx.update(WORKSPACES, new)

    def _find(self, ws: Obj, rt_key: str, name: str) -> Obj | None:
        return self.ctx.store.find(rt_key, ws["metadata"]["namespace"], name)

    def _ensure(self, ws: Obj, rt_key: str, obj: Obj | None) -> Obj | None:
        if obj is None:
            return None
        found = self._find(ws, rt_key, obj["metadata"]["name"])
        return found if found is not None else self.ctx.create(rt_key, obj)

    def _run(self, ws: Obj) -> float | None:
        self._ensure(ws, "persistentvolumeclaims", parts.pvc(ws))
        image = ws["spec"].get("image") or DEFAULT_IMAGE
        dep = self._ensure(ws, "apps/deployments", parts.deployment(ws, image))
        svc = self._ensure(ws, "services", parts.service(ws))
        assert dep is not None and svc is not None
        status = clone(ws.get("status") or {})
        old = status.get("conditions") or []
        ready = bool((dep.get("status") or {}).get("availableReplicas"))
        status.update(deploymentName=dep["metadata"]["name"], serviceName=svc["metadata"]["name"])
        if not ready:
            return self._wait(ws, status, "starting", "ComputeNotReady", "Compute is not ready")
        if not _is(old, "Available", "True"):
            self.ctx.event(ws, "WorkspaceRunning", "Workspace is now running")
        status["conditions"] = parts.conditions(old, "running", self.ctx.now_iso())
        ws = self.ctx.update_status(WORKSPACES, ws, status)
        return self._idle_check(ws)

    def _stop(self, ws: Obj) -> float | None:
        left = self._delete_owned(ws, keep_claim=True)
        status = clone(ws.get("status") or {})
        old = status.get("conditions") or []
        if left:
            return self._wait(ws, status, "stopping", "ComputeNotStopped",
                              "Compute is still running")
        if not _is(old, "Stopped", "True"):
            self.ctx.event(ws, "WorkspaceStopped", "Workspace has been stopped")
        status.pop("deploymentName", None)
        status.pop("serviceName", None)
        status["conditions"] = parts.conditions(old, "stopped", self.ctx.now_iso())
        self.ctx.update_status(WORKSPACES, ws, status)
        return None

    def _wait(self, ws: Obj, status: Obj, phase: str, reason: str, message: str) -> float:
        """A transition under way: its conditions now, another look soon."""
        status["conditions"] = parts.conditions(status.get("conditions") or [], phase,
                                                self.ctx.now_iso(), reason, message)
        self.ctx.update_status(WORKSPACES, ws, status)
        return POLL

    def _delete(self, ws: Obj) -> float | None:
        if FINALIZER not in (ws["metadata"].get("finalizers") or []):
            return None
        status = clone(ws.get("status") or {})
        status["conditions"] = parts.deleting(status.get("conditions") or [], self.ctx.now_iso())
        ws = self.ctx.update_status(WORKSPACES, ws, status)
        if self._delete_owned(ws, keep_claim=False):
            return POLL
        self._finalizer(ws, add=False)
        return None

    def _delete_owned(self, ws: Obj, keep_claim: bool) -> bool:
        """Deletes what is left of the Deployment, Service (and PVC); whether any was left."""
        left = False
        count = 2 if keep_claim else 3
        for rt_key, name in zip(OWNED[:count], parts.names(ws)[:count], strict=True):
            found = self._find(ws, rt_key, name)
            if found is not None:
                left = True
                if not found["metadata"].get("deletionTimestamp"):
                    self.ctx.delete(rt_key, found)
        return left

    # -- idle shutdown -------------------------------------------------------------------------
    def _idle_check(self, ws: Obj) -> float | None:
        idle = ws["spec"].get("idleShutdown") or {}
        probe = (idle.get("detection") or {}).get("httpGet")
        if not idle.get("enabled") or probe is None:
            return None
        pods = self._pods(ws)
        if not pods:
            return CHECK_EVERY
        code, body = fake_jupyter.idle_probe(self.ctx.store, pods[0], probe)
        if code == 404:
            return None  # permanent failure: idle shutdown disabled for this workspace
        last = _last_activity(body, probe) if code == 200 else None
        if last is None or self.ctx.now() - last < 60 * int(idle["idleTimeoutInMinutes"]):
            return CHECK_EVERY
        minutes = idle["idleTimeoutInMinutes"]
        self.ctx.event(ws, "IdleShutdown",
                       f"Stopping workspace due to idle timeout of {minutes} minutes")
        new = clone(ws)
        new["spec"]["desiredStatus"] = "Stopped"
        self.ctx.update(WORKSPACES, new)
        return POLL

    def _pods(self, ws: Obj) -> list[Obj]:
        want = parts.labels(ws)
        return [p for p in self.ctx.store.items("pods", ws["metadata"]["namespace"])
                if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in want.items())
                and (p.get("status") or {}).get("phase") == "Running"
                and not p["metadata"].get("deletionTimestamp")]


def _is(conds: list[Obj], kind: str, status: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == status for c in conds)


def _last_activity(body: Any, probe: Obj) -> float | None:
    spec = probe.get("lastActivityTimestamp") or {}
    value: Any = body
    for part in (spec.get("responseBodyPath") or "lastActiveTimestamp").split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None or value == "":
        return None
    if (spec.get("format") or "RFC3339") == "unix":
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    return parse_iso(str(value))
