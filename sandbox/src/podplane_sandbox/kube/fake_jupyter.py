"""A fake Jupyter server behind the workspace operator's pods (container `workspace`, port
8888, labels app=jupyter / workspace.jupyter.org/component=workspace), reached through the API
server's service and pod proxy (service_proxy.py), as fake_engine.py answers for inference
engines. Behaviour, from Jupyter Server's docs ("Security in the Jupyter Server": token
authentication, the `token` URL parameter; "Config file and command line options":
`ServerApp.base_url`, `ServerApp.root_dir`; the REST API: `/api/status`, `/api/contents`):

- The token is the container's JUPYTER_TOKEN (a value, or a Secret key the kubelet resolves);
  without it Jupyter makes a random one nobody knows. Every request needs `?token=`; a missing
  or wrong one is 403 (the API server's proxy does not forward Authorization).
- Paths live under `--ServerApp.base_url=<prefix>` from the container's command or args
  (default `/`); anything else is 404.
- `api/status`: started, last_activity, kernels, connections. `api/contents/<path>` GET: the
  contents model of a directory (its entries) or a text file, relative to the root dir
  (`--ServerApp.root_dir=`, else the home volume's mount path, else `/`), over the
  container's volume mounts (jupyter_files.py); PUT of a text file writes it (201). 404
  otherwise. `lab` and the base itself: a small HTML page. `api/kernels` and the kernels'
  WebSocket: fake_kernel.py.
- Every authenticated request except the idle endpoint is activity (last_activity = now).
- The idle endpoint the operator probes (jupyter-k8s `config/samples/idle-shutdown`: GET
  `/api/idle` on port 8888 from inside the pod, answered by the images' idle extension with
  `lastActiveTimestamp`): `/api/idle` (also under base_url) and `api/status` answer the probe;
  other probe paths are 404.
"""

from __future__ import annotations

import base64
import json
import weakref
from typing import Any

from podplane_sandbox.kube import fake_kernel as kernel
from podplane_sandbox.kube import jupyter_files as files
from podplane_sandbox.kube.util import iso, parse_iso

Obj = dict[str, Any]
Answer = tuple[int, str, str]
_ACTIVITY: weakref.WeakKeyDictionary[Any, dict[str, float]] = weakref.WeakKeyDictionary()


def serves(pod: Obj, container: Obj) -> bool:
    labels = pod["metadata"].get("labels") or {}
    return (labels.get("app") == "jupyter" and container.get("name") == "workspace"
            and labels.get("workspace.jupyter.org/component") == "workspace")


def _flag(container: Obj, name: str) -> str | None:
    for word in [*map(str, container.get("command") or []), *map(str, container.get("args") or [])]:
        if word.startswith(f"--{name}="):
            return word.split("=", 1)[1]
    return None


def base_url(container: Obj) -> str:
    prefix = (_flag(container, "ServerApp.base_url") or "").strip("/")
    return f"/{prefix}/" if prefix else "/"


def token(store: Any, pod: Obj, container: Obj) -> str | None:
    for env in container.get("env") or []:
        if env.get("name") != "JUPYTER_TOKEN":
            continue
        if "value" in env:
            return str(env["value"])
        ref = (env.get("valueFrom") or {}).get("secretKeyRef") or {}
        secret = store.find("secrets", pod["metadata"]["namespace"], ref.get("name", ""))
        data = ((secret or {}).get("data") or {}).get(ref.get("key", ""))
        return base64.b64decode(data).decode() if data else None
    return None


def _activity(store: Any, pod: Obj) -> dict[str, float]:
    seen = _ACTIVITY.setdefault(store, {})
    uid = pod["metadata"]["uid"]
    if uid not in seen:
        seen[uid] = _started(store, pod)
    return seen


def _started(store: Any, pod: Obj) -> float:
    return parse_iso((pod.get("status") or {}).get("startTime")) or store.clock.now()


def _status(store: Any, pod: Obj) -> Obj:
    last = _activity(store, pod)[pod["metadata"]["uid"]]
    kernels = kernel.kernels_of(store, pod).values()
    return {"started": iso(_started(store, pod)), "last_activity": iso(last),
            "kernels": len(kernels), "connections": sum(k.connections for k in kernels)}


def idle_probe(store: Any, pod: Obj, probe: Obj) -> tuple[int, Obj]:
    """What the operator's probe of this pod gets: (HTTP status, JSON body)."""
    container = next((c for c in pod["spec"].get("containers") or [] if serves(pod, c)), None)
    if container is None or str(probe.get("port", 8888)) not in ("8888", "http"):
        return 0, {}  # nothing listens there: a retryable failure
    path = "/" + str(probe.get("path") or "").strip("/")
    base = base_url(container).rstrip("/")
    if base and path.startswith(base + "/"):
        path = path[len(base):]
    status = _status(store, pod)
    if path == "/api/idle":
        return 200, {"lastActiveTimestamp": status["last_activity"]}
    if path == "/api/status":
        return 200, status
    return 404, {}


def answer(store: Any, pod: Obj, container: Obj, method: str, path: str,
           query: dict[str, str], body: bytes) -> Answer:
    rest = _rest_of(store, pod, container, path, query)
    if not isinstance(rest, str):
        return rest
    return _route(store, pod, container, method, rest, body)


def socket_kernel(store: Any, pod: Obj, container: Obj, path: str, query: dict[str, str]
                  ) -> kernel.Kernel | int:
    """The kernel a WebSocket to `path` is for, or the HTTP status its handshake gets."""
    rest = _rest_of(store, pod, container, path, query)
    if not isinstance(rest, str):
        return rest[0]
    found = kernel.channel_kernel(store, pod, rest)
    return 404 if found is None else found


def _rest_of(store: Any, pod: Obj, container: Obj, path: str, query: dict[str, str]
             ) -> str | Answer:
    """The path under the server's base URL of an authenticated request (counted as
    activity), or the refusal it gets."""
    expected = token(store, pod, container)
    if expected is None or query.get("token") != expected:
        return _json(403, {"message": "Forbidden", "reason": None})
    full, base = "/" + path.lstrip("/"), base_url(container)
    if not (full + "/").startswith(base):
        return _json(404, {"message": "Not Found", "reason": None})
    rest = full[len(base):] if len(full) >= len(base) else ""
    if rest.rstrip("/") != "api/idle":
        _activity(store, pod)[pod["metadata"]["uid"]] = store.clock.now()
    return rest.strip("/")


def _route(store: Any, pod: Obj, container: Obj, method: str, rest: str, body: bytes) -> Answer:
    if rest == "api/status" and method == "GET":
        return _json(200, _status(store, pod))
    if rest == "api/idle" and method == "GET":
        return _json(200, {"lastActiveTimestamp": _status(store, pod)["last_activity"]})
    if rest == "api/kernels" or rest.startswith("api/kernels/"):
        code, body_out = kernel.rest(store, pod, method, rest)
        return (code, "application/json", "") if body_out is None else _json(code, body_out)
    if rest == "api/contents" or rest.startswith("api/contents/"):
        rel = rest[len("api/contents"):].strip("/")
        if method == "GET":
            return _get(store, pod, container, rel)
        if method == "PUT":
            return _put(store, pod, container, rel, body)
        return _json(405, {"message": "Method Not Allowed", "reason": None})
    if rest in ("", "lab", "tree") or rest.startswith("lab/"):
        name = pod["metadata"].get("labels", {}).get("workspace.jupyter.org/workspace-name", "")
        return 200, "text/html", (f"<!doctype html><html><head><title>JupyterLab</title></head>"
                                  f"<body><h1>{name}</h1><a href=\"api/status\">status</a>"
                                  "</body></html>")
    return _json(404, {"message": "Not Found", "reason": None})


def _json(code: int, obj: Obj | list[Obj]) -> Answer:
    return code, "application/json", json.dumps(obj)


def root_dir(container: Obj) -> str:
    flag = _flag(container, "ServerApp.root_dir") or _flag(container, "notebook-dir")
    if flag:
        return "/" + flag.strip("/")
    home = next((m["mountPath"] for m in container.get("volumeMounts") or []
                 if m.get("name") == "workspace-storage"), "/")
    return "/" + home.strip("/")


def _locate(store: Any, pod: Obj, container: Obj, rel: str
            ) -> tuple[str, files.Mount | None, str, list[files.Mount]]:
    """(absolute path, the mount it is in or None, path inside that mount, all mounts)."""
    absolute = "/" + "/".join(p for p in (root_dir(container).strip("/"), rel) if p)
    mounts = files.mounts_of(store, pod, container)
    for m in mounts:
        if absolute == m.path or absolute.startswith(m.path.rstrip("/") + "/"):
            return absolute, m, absolute[len(m.path):].strip("/"), mounts
    return absolute, None, "", mounts


def _get(store: Any, pod: Obj, container: Obj, rel: str) -> Answer:
    absolute, mount, inner, mounts = _locate(store, pod, container, rel)
    entries: dict[str, int | None] = {}
    for m in mounts:  # mount points below this directory show as directories
        if m.path.startswith(absolute.rstrip("/") + "/") and m.path != absolute:
            entries[m.path[len(absolute.rstrip("/")) + 1:].split("/")[0]] = None
    if mount is not None:
        text = files.read(store, mount, inner) if inner else None
        if text is not None:
            return _json(200, _model(rel, "file", len(text), store, text))
        found = files.listing(store, mount, inner)
        if found is None and not entries:
            return _json(404, {"message": f"No such file or directory: {rel}", "reason": None})
        entries.update(found or {})
    elif not entries:
        return _json(404, {"message": f"No such file or directory: {rel}", "reason": None})
    content = [_model(f"{rel}/{n}".strip("/"), "directory" if s is None else "file", s, store)
               for n, s in sorted(entries.items())]
    return _json(200, _model(rel, "directory", None, store, content))


def _put(store: Any, pod: Obj, container: Obj, rel: str, body: bytes) -> Answer:
    try:
        model = json.loads(body or b"{}")
    except ValueError:
        return _json(400, {"message": "Invalid JSON in body of request", "reason": None})
    if model.get("type") != "file" or model.get("format", "text") != "text":
        return _json(400, {"message": "Only text files are supported here", "reason": None})
    _, mount, inner, _ = _locate(store, pod, container, rel)
    if mount is None or not inner:
        return _json(403, {"message": f"Permission denied: {rel}", "reason": None})
    text = str(model.get("content") or "")
    refused = files.write(store, mount, inner, text)
    if refused is not None:
        return _json(403, {"message": f"Permission denied: {rel}: {refused}", "reason": None})
    files.forget_claims(store)
    return _json(201, _model(rel, "file", len(text), store))


def _model(path: str, kind: str, size: int | None, store: Any, content: Any = None) -> Obj:
    now = iso(store.clock.now())
    return {"name": path.rsplit("/", 1)[-1], "path": path, "type": kind,
            "format": None if content is None else ("json" if kind == "directory" else "text"),
            "mimetype": "text/plain" if kind == "file" else None, "size": size,
            "writable": True, "created": now, "last_modified": now, "content": content}
