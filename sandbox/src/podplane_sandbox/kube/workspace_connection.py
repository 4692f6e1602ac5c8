"""`connection.workspace.jupyter.org/v1alpha1` WorkspaceConnection, the workspace operator's
extension API (jupyter-infra/jupyter-k8s `internal/extensionapi/serverroute_connection.go`,
`api/connection/v1alpha1/workspace_connection_types.go`), answered in-process. Create-only:
nothing is stored; the answer is 201 with the request's metadata and spec and
status {workspaceConnectionType, workspaceConnectionUrl} (what hyp's `create_space_access`
reads). Checks in upstream's order:

- spec.workspaceName and spec.workspaceConnectionType required; the type is `web-ui` or
  `<ide>-remote` (same regex) -> 400 with upstream's messages;
- the Workspace must exist (404), name an existing WorkspaceAccessStrategy (404 "access
  strategy not found"; the operator's templates set one, the sandbox has no implicit default:
  stricter) and be Available (400 "workspace is not available. ...");
- web-ui needs the strategy's bearerAuthURLTemplate (400 "web browser access is not enabled
  for this workspace"); the URL is that template rendered with `.Workspace.Name` /
  `.Workspace.Namespace` and `?token=<bootstrap token>` (generateBearerTokenURL; the JWT is
  an opaque random value here);
- a remote type needs createConnectionHandlerMap[type] or createConnectionHandler (400 "connection
  type %q is not configured for this workspace"); its plugin (AWS's: SSM remote sessions) is
  not emulated, so a configured one answers 400 "plugin endpoints not configured. ...".

Only served while the add-on's CRDs exist (the APIService comes with the add-on).
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from podplane_sandbox.kube.errors import KubeError

Obj = dict[str, Any]
PATH = "/apis/connection.workspace.jupyter.org/v1alpha1/namespaces/{namespace}/workspaceconnections"
REMOTE = re.compile(r"^[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*-remote$")
TEMPLATE = re.compile(r"\{\{\s*\.Workspace\.(Name|Namespace)\s*\}\}")


def connection_routes(store: Any) -> list[Route]:
    async def create(request: Request) -> Response:
        if store.registry.by_key("workspace.jupyter.org/workspaces") is None:
            raise KubeError(404, "the server could not find the requested resource", "NotFound")
        try:
            req = json.loads(await request.body() or b"{}")
        except ValueError:
            raise KubeError(400, "Invalid JSON", "BadRequest") from None
        status = _connect(store, request.path_params["namespace"], req)
        body = {"apiVersion": "connection.workspace.jupyter.org/v1alpha1",
                "kind": "WorkspaceConnection", "metadata": req.get("metadata") or {},
                "spec": req.get("spec") or {}, "status": status}
        return Response(json.dumps(body), 201, media_type="application/json")
    return [Route(PATH, create, methods=["POST"])]


def _bad(message: str, code: int = 400) -> KubeError:
    return KubeError(code, message, "BadRequest" if code == 400 else "NotFound")


def _connect(store: Any, ns: str, req: Obj) -> Obj:
    spec = req.get("spec") or {}
    name, kind = spec.get("workspaceName") or "", spec.get("workspaceConnectionType") or ""
    if not name:
        raise _bad("workspaceName is required")
    if not kind:
        raise _bad("workspaceConnectionType is required")
    if kind != "web-ui" and not REMOTE.match(kind):
        raise _bad(f"invalid workspaceConnectionType: '{kind}'. Must be 'web-ui' or follow the "
                   "'{ide}-remote' pattern (e.g. 'vscode-remote', 'kiro-remote', "
                   "'cursor-remote')")
    ws = store.find("workspace.jupyter.org/workspaces", ns, name)
    if ws is None:
        raise _bad(f'workspaces.workspace.jupyter.org "{name}" not found', 404)
    ref = ws["spec"].get("accessStrategy") or {}
    strategy = store.find("workspace.jupyter.org/workspaceaccessstrategies",
                          ref.get("namespace") or ns, ref.get("name", "")) if ref else None
    if strategy is None:
        raise _bad("access strategy not found", 404)
    if not any(c.get("type") == "Available" and c.get("status") == "True"
               for c in (ws.get("status") or {}).get("conditions") or []):
        raise _bad("workspace is not available. Check workspace status for details")
    return {"workspaceConnectionType": kind,
            "workspaceConnectionUrl": _url(store, ws, strategy["spec"], kind)}


def _url(store: Any, ws: Obj, strategy: Obj, kind: str) -> str:
    if kind == "web-ui":
        template = strategy.get("bearerAuthURLTemplate") or ""
        if not template:
            raise _bad("web browser access is not enabled for this workspace")
        meta = ws["metadata"]
        url = TEMPLATE.sub(lambda m: str(meta["name" if m.group(1) == "Name" else "namespace"]),
                           template)
        return f"{url}?token={store.random_token(32)}"
    handler = (strategy.get("createConnectionHandlerMap") or {}).get(kind) or \
        strategy.get("createConnectionHandler")
    if not handler:
        raise _bad(f'connection type "{kind}" is not configured for this workspace')
    raise _bad("plugin endpoints not configured. Please configure controller.plugins in helm "
               "values")
