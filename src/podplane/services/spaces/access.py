"""Reaching a running space: its files, read through its server.

JupyterLab's contents API (`GET <base_url>api/contents/<path>`, Jupyter Server REST API)
through the API server's Service proxy, as podplane. The kube-apiserver drops `Authorization`
once it has authenticated podplane (k8s.io/apiserver pkg/endpoints/filters/authentication.go),
so the server's token travels as the `token` query parameter, which Jupyter Server also
accepts. Only JSON comes back: podplane never serves the space's own pages on its origin,
where their scripts would act with the viewer's session (docs/spaces.md, "Opening a space").
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from urllib.parse import quote

from podplane.cloud.ports_kube import KubePort
from podplane.domain.effects import Effect, Role
from podplane.domain.errors import CloudError, Conflict, InvalidInput, NotFound
from podplane.domain.spaces import render, views
from podplane.services.context import Ctx
from podplane.services.registry import service
from podplane.services.scope import kube_of
from podplane.services.spaces import cluster as sc

MAX_ENTRIES = 500


@dataclass(frozen=True)
class SpaceFile:
    name: str
    path: str
    type: str             # directory | file | notebook
    size: int | None
    last_modified: str | None


@dataclass(frozen=True)
class SpaceListing:
    space: str
    path: str
    entries: list[SpaceFile]
    truncated: bool


def service_name(name: str) -> str:
    return f"workspace-{name}-service"   # jupyter-k8s GenerateServiceName


async def running(kube: KubePort, cluster: str, name: str) -> None:
    state, _ = views.state_of(await sc.find(kube, cluster, name))
    if state != "Running":
        raise Conflict(f"Space {name!r} is {state.lower()}.", hint="Start it first "
                       "(space_set desired=Running).")


# Reading through the space's server runs as the space: operator, like invoking an endpoint.
@service(Effect.READ, "space.files", min_role=Role.OPERATOR)
async def list_files(ctx: Ctx, cluster: str, name: str, path: str = "") -> SpaceListing:
    clean = path.strip("/")
    if any(part in ("", ".", "..") for part in clean.split("/")) and clean:
        raise InvalidInput("path is a directory like data/train (no . or .. segments).",
                           field="path")
    _, kube = await kube_of(ctx, cluster)
    await running(kube, cluster, name)
    token = token_of(await kube.get("v1", "Secret", render.token_secret(name), render.NAMESPACE))
    where = render.base_path(cluster, name).lstrip("/") + "api/contents/" + quote(clean)
    status, answer = await kube.proxy("GET", render.NAMESPACE, service_name(name),
                                      render.PORT, f"{where}?token={quote(token)}")
    if status == 404:
        raise NotFound(f"Space {name!r} has no directory {'/' + clean!r}.")
    if status >= 400 or not isinstance(answer, dict):
        raise CloudError(f"Space {name!r} answered {status}: {str(answer)[:200]}",
                         code="space_error", retryable=status == 503)
    content = answer.get("content") if answer.get("type") == "directory" else [answer]
    entries = [SpaceFile(str(e.get("name")), "/" + str(e.get("path", "")).lstrip("/"),
                         str(e.get("type")), e.get("size"), e.get("last_modified"))
               for e in (content or [])[:MAX_ENTRIES]]
    return SpaceListing(name, "/" + clean, entries, len(content or []) > MAX_ENTRIES)


def token_of(secret: dict[str, object] | None) -> str:
    data = (secret or {}).get("data") or {}
    raw = data.get(render.TOKEN_KEY) if isinstance(data, dict) else None
    if not raw:
        raise CloudError("The space's token Secret is missing.", code="space_token_missing",
                         hint="Delete the space (its home is kept) and create it again.")
    return base64.b64decode(str(raw)).decode()
