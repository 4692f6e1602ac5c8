"""The HTTP face of the emulator: discovery, OpenAPI and the resource verbs (behind Gate)."""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from podplane_sandbox.kube import discovery
from podplane_sandbox.kube.crds import CrdManager
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.handlers import Handlers, parse_body
from podplane_sandbox.kube.paths import parse
from podplane_sandbox.kube.service_proxy import proxy_routes
from podplane_sandbox.kube.store import Store
from podplane_sandbox.kube.streams import PodLogs, Watch
from podplane_sandbox.kube.workspace_connection import connection_routes


class JSON(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":")).encode()


class Aggregated(JSON):
    media_type = discovery.AGGREGATED


def _error(exc: KubeError) -> Response:
    return JSON(exc.status(), status_code=exc.code)


def _warn(response: Response, warnings: list[str]) -> Response:
    for w in warnings:
        response.headers.append("Warning", f'299 - "{w}"')
    return response


def build_app(store: Store, crds: CrdManager, server_address: str) -> Starlette:
    handlers = Handlers(store)
    registry = store.registry

    async def version(_: Request) -> Response:
        return JSONResponse(discovery.VERSION)

    async def health(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def api_root(request: Request) -> Response:
        if discovery.wants_aggregated(request.headers.get("accept", "")):
            return Aggregated(discovery.aggregated(registry, core=True))
        return JSON(discovery.api_versions(server_address))

    async def apis_root(request: Request) -> Response:
        if discovery.wants_aggregated(request.headers.get("accept", "")):
            return Aggregated(discovery.aggregated(registry, core=False))
        return JSON(discovery.api_group_list(registry))

    async def openapi_index(_: Request) -> Response:
        return JSON(discovery.openapi_index(registry))

    async def openapi_doc(request: Request) -> Response:
        parts = request.path_params["rest"].strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            return JSON(discovery.openapi_doc(registry, "", parts[1]))
        if parts[0] == "apis" and len(parts) == 3:
            return JSON(discovery.openapi_doc(registry, parts[1], parts[2]))
        raise KubeError(404, "the server could not find the requested resource", "NotFound")

    async def resources(request: Request) -> Response:
        path = request.url.path.rstrip("/")
        parts = [p for p in path.split("/") if p]
        if parts == ["api", "v1"]:
            return JSON(discovery.resource_list(registry, "", "v1"))
        if len(parts) == 2 and parts[0] == "apis":
            versions = registry.group_versions().get(parts[1])
            if not versions:
                raise KubeError(404, "the server could not find the requested resource", "NotFound")
            return JSON(discovery.api_group(parts[1], versions))
        if len(parts) == 3 and parts[0] == "apis":
            listing = discovery.resource_list(registry, parts[1], parts[2])
            if listing is None:
                raise KubeError(404, "the server could not find the requested resource", "NotFound")
            return JSON(listing)
        return await verb(request, path)

    async def verb(request: Request, path: str) -> Response:
        t = parse(registry, path)
        q = dict(request.query_params)
        want_table = "as=Table" in request.headers.get("accept", "")
        method = request.method
        if method == "GET":
            if t.sub == "log":
                logs = PodLogs(store, t, q)
                if q.get("follow") in ("true", "1"):
                    return StreamingResponse(logs.follow(), media_type="text/plain")
                return PlainTextResponse(logs.snapshot()[0])
            if not t.name:
                if q.get("watch") in ("true", "1", "True"):
                    return StreamingResponse(
                        Watch(store, t, q, want_table).stream(), media_type="application/json"
                    )
                return JSON(handlers.list_objects(t, q, want_table))
            obj = handlers.get(t)
            if want_table and not t.sub:
                from podplane_sandbox.kube.tables import table

                return JSON(
                    table(
                        t.rt,
                        t.version,
                        [obj],
                        store.clock.now(),
                        q.get("includeObject", "Metadata"),
                        {"resourceVersion": obj["metadata"]["resourceVersion"]},
                    )
                )
            return JSON(obj)
        body = parse_body(await request.body(), request.headers.get("content-type", ""))
        if method == "POST" and t.sub in ("eviction", "binding"):
            return JSON(handlers.pod_action(t, body), status_code=201)
        if method == "POST" and not t.name:
            obj, warnings = handlers.create(t, body, q)
            return _warn(JSON(obj, status_code=201), warnings)
        if method == "PUT" and t.name:
            obj, warnings = handlers.replace(t, body, q)
            return _warn(JSON(obj), warnings)
        if method == "PATCH" and t.name:
            obj, warnings = handlers.patch(t, body, request.headers.get("content-type", ""), q)
            return _warn(JSON(obj), warnings)
        if method == "DELETE":
            if t.name:
                return JSON(handlers.delete(t, body, q))
            return JSON(handlers.delete_collection(t, body, q))
        raise KubeError(405, f"{method} is not supported on {path}", "MethodNotAllowed")

    async def on_kube_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, KubeError)
        return _error(exc)

    async def on_unexpected(_: Request, exc: Exception) -> Response:
        return _error(KubeError(500, f"internal error: {type(exc).__name__}: {exc}"))

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    app = Starlette(
        routes=[
            Route("/version", version),
            Route("/version/", version),
            Route("/healthz", health),
            Route("/livez", health),
            Route("/readyz", health),
            Route("/api", api_root),
            Route("/api/", api_root),
            Route("/apis", apis_root),
            Route("/apis/", apis_root),
            Route("/openapi/v3", openapi_index),
            Route("/openapi/v3/{rest:path}", openapi_doc),
            *proxy_routes(store),  # services/{name}/proxy: before the resource verbs
            *connection_routes(store),  # the workspace operator's extension API
            Route("/api/{rest:path}", resources, methods=methods),
            Route("/apis/{rest:path}", resources, methods=methods),
        ],
        exception_handlers={KubeError: on_kube_error, Exception: on_unexpected},
    )
    return app
