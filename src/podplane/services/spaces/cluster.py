"""Reading a cluster's spaces: their Workspaces, pods and whether the operator is there."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import Conflict, NotFound
from podplane.domain.features import spaces as feature
from podplane.domain.spaces import render
from podplane.domain.spaces.views import NAME_LABEL
from podplane.services.context import Ctx
from podplane.services.features.state import desired_of

Obj = dict[str, Any]
FEATURE = feature.NAME


class SpacesOff(Conflict):
    code = "feature_off"


async def require_feature(ctx: Ctx, cluster: str) -> None:
    """A space needs the operator and the shared claims the `spaces` feature installs."""
    wants = await desired_of(ctx.app, cluster)
    if FEATURE not in wants or not wants[FEATURE].enabled:
        raise SpacesOff(f"Dev spaces are off on {cluster!r}.",
                        hint=f"Turn on the {FEATURE!r} feature first "
                        f"(PATCH .../features/{FEATURE} {{\"enabled\": true}}; feature_set).")


async def workspaces(kube: KubePort) -> list[Obj]:
    try:
        return await kube.list(render.API_VERSION, render.KIND, namespace=render.NAMESPACE)
    except NotFound:   # the CRD is not installed: no spaces
        return []


async def get_or_none(kube: KubePort, api_version: str, kind: str, name: str) -> Obj | None:
    """An object of the spaces' namespace, or None when there is none."""
    try:
        return await kube.get(api_version, kind, name, render.NAMESPACE)
    except NotFound:
        return None


async def find(kube: KubePort, cluster: str, name: str) -> Obj:
    found = await get_or_none(kube, render.API_VERSION, render.KIND, name)
    if found is None:
        raise NotFound(f"Cluster {cluster!r} has no space {name!r}.",
                       hint="List them with space_list (GET .../spaces).")
    return found


async def pods_of(kube: KubePort, name: str) -> list[Obj]:
    return await kube.list("v1", "Pod", namespace=render.NAMESPACE,
                           labels={NAME_LABEL: name})
