"""Discovery documents (/api, /apis, resource lists) and the OpenAPI v3 documents that make
kubectl's apply/create validation path use server-side field validation."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from podplane_sandbox.kube.resources import ALL_VERBS, Registry, ResourceType

VERSION = {
    "major": "1",
    "minor": "36",
    "gitVersion": "v1.36.2-eks-podplane",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-06-01T00:00:00Z",
    "goVersion": "go1.25.0",
    "compiler": "gc",
    "platform": "linux/amd64",
    "emulationMajor": "1",
    "emulationMinor": "36",
}


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": gvs,
        "preferredVersion": gvs[0],
    }


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [api_group(g, vs) for g, vs in sorted(registry.group_versions().items()) if g]
    for g in groups:
        g.pop("kind")
        g.pop("apiVersion")
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _resource_entries(rt: ResourceType) -> list[dict[str, Any]]:
    digest = hashlib.sha256(rt.key.encode()).digest()[:8]
    main = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(ALL_VERBS),
        "storageVersionHash": __import__("base64").b64encode(digest).decode(),
    }
    if rt.short_names:
        main["shortNames"] = list(rt.short_names)
    if rt.categories:
        main["categories"] = list(rt.categories)
    out = [main]
    for sub in rt.subresources:
        entry: dict[str, Any] = {
            "name": f"{rt.plural}/{sub}",
            "singularName": "",
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": ["get", "patch", "update"],
        }
        if sub == "scale":
            entry.update(kind="Scale", group="autoscaling", version="v1")
        elif sub == "log":
            entry.update(verbs=["get"])
        elif sub in ("binding", "eviction"):
            entry.update(verbs=["create"], kind="Binding" if sub == "binding" else "Eviction")
        elif sub == "finalize":
            entry.update(verbs=["update"])
        out.append(entry)
    return out


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    rts = [rt for rt in registry.all() if rt.group == group and version in rt.served_versions()]
    if not rts:
        return None
    gv = f"{group}/{version}" if group else version
    resources = [e for rt in sorted(rts, key=lambda r: r.plural) for e in _resource_entries(rt)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }


def openapi_index(registry: Registry) -> dict[str, Any]:
    paths = {}
    for group, versions in registry.group_versions().items():
        for v in versions:
            rel = f"api/{v}" if not group else f"apis/{group}/{v}"
            doc = openapi_doc(registry, group, v)
            digest = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32]
            paths[rel] = {"serverRelativeURL": f"/openapi/v3/{rel}?hash={digest.upper()}"}
    return {"paths": paths}


_PARAMS = [
    {"name": n, "in": "query", "schema": {"type": "string"}, "uniqueItems": True}
    for n in ("dryRun", "fieldManager", "fieldValidation", "pretty")
]


def openapi_doc(registry: Registry, group: str, version: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for rt in registry.all():
        if rt.group != group or version not in rt.served_versions():
            continue
        gvk = {"group": group, "version": version, "kind": rt.kind}
        base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        coll = (
            f"{base}/namespaces/{{namespace}}/{rt.plural}"
            if rt.namespaced
            else f"{base}/{rt.plural}"
        )
        op = {
            "x-kubernetes-group-version-kind": gvk,
            "parameters": _PARAMS,
            "responses": {"200": {"description": "OK"}},
        }
        paths[coll] = {
            "post": {**op, "x-kubernetes-action": "post", "operationId": f"create{rt.kind}"},
            "get": {**op, "x-kubernetes-action": "list", "operationId": f"list{rt.kind}"},
        }
        paths[coll + "/{name}"] = {
            "put": {**op, "x-kubernetes-action": "put", "operationId": f"replace{rt.kind}"},
            "patch": {**op, "x-kubernetes-action": "patch", "operationId": f"patch{rt.kind}"},
            "get": {**op, "x-kubernetes-action": "get", "operationId": f"read{rt.kind}"},
        }
        schema = rt.schema_for(version)
        if schema is not None:
            name = ".".join(reversed(group.split("."))) + f".{version}.{rt.kind}"
            schemas[name] = {**schema, "x-kubernetes-group-version-kind": [gvk]}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
        "paths": paths,
        "components": {"schemas": schemas},
    }


AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """kubectl asks for aggregated discovery first; plain clients ask for JSON."""
    first = accept.split(",")[0].replace(" ", "")
    return (
        "g=apidiscovery.k8s.io" in first and "v=v2" in first and "as=APIGroupDiscoveryList" in first
    )


def _discovery_resource(rt: ResourceType, version: str) -> dict[str, Any]:
    kind = {"group": rt.group, "version": version, "kind": rt.kind}
    entry: dict[str, Any] = {
        "resource": rt.plural,
        "responseKind": kind,
        "singularResource": rt.singular,
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "verbs": list(ALL_VERBS),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subs = []
    for sub in rt.subresources:
        verbs = {
            "log": ["get"],
            "binding": ["create"],
            "eviction": ["create"],
            "finalize": ["update"],
        }.get(sub, ["get", "patch", "update"])
        response = (
            {"group": "autoscaling", "version": "v1", "kind": "Scale"} if sub == "scale" else kind
        )
        subs.append({"subresource": sub, "responseKind": response, "verbs": verbs})
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(registry: Registry, core: bool) -> dict[str, Any]:
    """APIGroupDiscoveryList for /api (core) or /apis (every named group)."""
    items = []
    for group, versions in sorted(registry.group_versions().items()):
        if (group == "") != core:
            continue
        items.append(
            {
                "metadata": {"name": group},
                "versions": [
                    {
                        "version": v,
                        "freshness": "Current",
                        "resources": [
                            _discovery_resource(rt, v)
                            for rt in sorted(registry.all(), key=lambda r: r.plural)
                            if rt.group == group and v in rt.served_versions()
                        ],
                    }
                    for v in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }
