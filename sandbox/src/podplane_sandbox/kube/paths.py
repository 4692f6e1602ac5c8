"""Parsing of resource URLs: /api/v1/..., /apis/{group}/{version}/... ."""

from __future__ import annotations

from dataclasses import dataclass

from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.resources import Registry, ResourceType


@dataclass(frozen=True)
class Target:
    rt: ResourceType
    version: str
    namespace: str  # "" for cluster-scoped or all namespaces
    name: str  # "" for collections
    sub: str  # "" | status | scale | log | finalize ...


def parse(registry: Registry, path: str) -> Target:
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif parts and parts[0] == "apis" and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise KubeError(404, "the server could not find the requested resource", "NotFound")
    if rest and rest[0] == "watch":
        raise KubeError(404, "the legacy watch path is not served", "NotFound")
    ns = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        rt = registry.lookup(group, version, rest[2])
        if rt is not None and rt.namespaced:
            ns, rest = rest[1], rest[2:]
    if not rest:
        raise KubeError(404, "the server could not find the requested resource", "NotFound")
    rt = registry.lookup(group, version, rest[0])
    if rt is None:
        raise KubeError(404, "the server could not find the requested resource", "NotFound")
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3 or (sub and sub not in rt.subresources):
        raise KubeError(404, "the server could not find the requested resource", "NotFound")
    return Target(rt, version, ns, name, sub)
