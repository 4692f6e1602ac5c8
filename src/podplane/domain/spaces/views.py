"""What a space looks like, read from its Workspace, pods and home claim (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from podplane.domain.jobs.kinds import MANAGED_BY
from podplane.domain.spaces import render

Obj = dict[str, Any]
CREATED_BY = "workspace.jupyter.org/created-by"   # jupyter-k8s AnnotationCreatedBy
NAME_LABEL = "workspace.jupyter.org/workspace-name"


@dataclass(frozen=True)
class SpacePod:
    name: str
    phase: str
    node: str | None
    ready: bool


@dataclass(frozen=True)
class Mount:
    path: str
    source: str


@dataclass(frozen=True)
class SpaceView:
    name: str
    display_name: str
    app: str
    image: str
    state: str            # Starting | Running | Stopping | Stopped | Failed
    desired: str          # Running | Stopped
    message: str
    cpu: str | None
    memory: str | None
    gpus: int
    instance_group: str | None
    storage: str | None
    idle_minutes: int
    console_path: str     # the space's page in podplane's console
    created_by: str | None
    made_by: str          # podplane | other (made with hyp or kubectl)
    template: str | None = None   # the WorkspaceTemplate it was made from
    mounts: list[Mount] = field(default_factory=list)
    pods: list[SpacePod] = field(default_factory=list)


def condition(ws: Obj, kind: str) -> Obj:
    for c in (ws.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return {}


def state_of(ws: Obj) -> tuple[str, str]:
    """(state, message) from jupyter-k8s's conditions (internal/controller/conditions.go):
    Degraded wins; then Available or Stopped; else it is moving towards what is desired."""
    desired = desired_of(ws)
    for kind, state in (("Degraded", "Failed"), ("Available", "Running"),
                        ("Stopped", "Stopped")):
        if (c := condition(ws, kind)).get("status") == "True":
            if state == "Running" and desired == "Stopped":
                break
            return state, str(c.get("message") or "")
    moving = "Starting" if desired == "Running" else "Stopping"
    return moving, str(condition(ws, "Progressing").get("message") or "")


def desired_of(ws: Obj) -> str:
    return str((ws.get("spec") or {}).get("desiredStatus") or "Running")  # upstream default


def view(cluster: str, ws: Obj, pods: list[Obj]) -> SpaceView:
    spec, meta = ws.get("spec") or {}, ws["metadata"]
    requests = (spec.get("resources") or {}).get("requests") or {}
    idle = spec.get("idleShutdown") or {}
    state, message = state_of(ws)
    return SpaceView(
        name=meta["name"], display_name=str(spec.get("displayName") or meta["name"]),
        app=str(spec.get("appType") or "jupyterlab"), image=str(spec.get("image") or ""),
        state=state, desired=desired_of(ws), message=message,
        cpu=requests.get("cpu"), memory=requests.get("memory"),
        gpus=int(requests.get(render.GPU) or 0),
        instance_group=(meta.get("annotations") or {}).get(render.GROUP_ANNOTATION),
        storage=(spec.get("storage") or {}).get("size")
        or (meta.get("annotations") or {}).get(render.HOME_ANNOTATION),
        idle_minutes=int(idle.get("idleTimeoutInMinutes") or 0) if idle.get("enabled") else 0,
        console_path=render.console_path(cluster, meta["name"]),
        created_by=(meta.get("annotations") or {}).get(CREATED_BY),
        made_by="podplane" if (meta.get("labels") or {}).get(MANAGED_BY) == "podplane"
        else "other",
        template=(spec.get("templateRef") or {}).get("name"),
        mounts=_mounts(spec), pods=[_pod(p) for p in pods])


def _mounts(spec: Obj) -> list[Mount]:
    out = []
    if (home := spec.get("storage")) is not None:
        out.append(Mount(str(home.get("mountPath") or "/home/jovyan"), "home volume"))
    out += [Mount(str(v["mountPath"]), "home volume" if v.get("name") == "home"
                  else f"claim {v['persistentVolumeClaimName']}")
            for v in spec.get("volumes") or []]
    return out


def _pod(p: Obj) -> SpacePod:
    status = p.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in status.get("conditions") or [])
    return SpacePod(p["metadata"]["name"], str(status.get("phase") or "Pending"),
                    (p.get("spec") or {}).get("nodeName"), ready)
