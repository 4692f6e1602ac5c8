"""The API server's proxy subresource of Services, in front of the sandbox's fake engines.

`/api/v1/namespaces/{ns}/services/[scheme:]{name}[:port]/proxy/{path}` (Kubernetes docs,
"Manually constructing apiserver proxy URLs" in "Access Services Running on Clusters"; the
`services/proxy` subresource of the core API). kube-apiserver resolves the Service's port, picks
one ready endpoint and forwards the request; with no ready endpoint it answers 503
`no endpoints available for service "<name>"` (kubernetes/kubernetes
pkg/registry/core/service/storage, ResourceLocation). Here the ready endpoints are the pods the
selector matches whose Ready condition is True and that are not being deleted (what the
EndpointSlice controller publishes), taken in turn rather than at random so tests can count.
Pods running vLLM or SGLang answer through `fake_engine`, workspace pods through
`fake_jupyter`; any other pod refuses the connection,
as a port with nothing listening would. Who may call through it is the gate's question (gate.py:
the `services/proxy` subresource, verb by HTTP method), asked before a request reaches here.

`/api/v1/namespaces/{ns}/pods/{name}[:port]/proxy/{path}` reaches one pod (the `pods/proxy`
subresource, same docs page): how a caller reads one engine's own `/metrics`. A pod that is
not Running answers 503 (kube-apiserver cannot dial it).

A completion held in flight (fake_engine.py, `busy_seconds`) waits on the virtual clock and
fails 502 (connection reset) when its pod's engine stopped before it finished. A deleted pod
stays routable for the data path's propagation delay and refuses connections once its engine
had SIGTERM: pod_termination.py, with its sources.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from podplane_sandbox.kube import fake_jupyter, fake_kernel
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.fake_engine import engine_of, engines_of
from podplane_sandbox.kube.gate import refuse
from podplane_sandbox.kube.pod_termination import terminations_of
from podplane_sandbox.kube.selectors import match_label_selector
from podplane_sandbox.kube.sglang_router import SglangRouters, is_router
from podplane_sandbox.kube.store import Store

Obj = dict[str, Any]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
PREFIX = "/api/v1/namespaces/{namespace}/services/{service}/proxy"
POD_PREFIX = "/api/v1/namespaces/{namespace}/pods/{pod}/proxy"
COMPLETIONS = ("v1/completions", "v1/chat/completions")


def split_service(text: str) -> tuple[str, str]:
    """`name`, `name:port` or `scheme:name:port` -> (name, port or "")."""
    parts = text.split(":")
    if len(parts) == 3:
        return parts[1], parts[2]
    if len(parts) == 2:
        return parts[0], parts[1]
    return parts[0], ""


def _ready(pod: Obj) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    conds = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def _service_port(svc: Obj, port: str) -> Obj:
    ports = (svc.get("spec") or {}).get("ports") or []
    for p in ports:
        if not port or port == p.get("name") or port == str(p.get("port")):
            return dict(p)
    name = svc["metadata"]["name"]
    raise KubeError(503, f'no endpoints available for service "{name}"', "ServiceUnavailable")


def _container_for(pod: Obj, target: Any) -> Obj | None:
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if str(target) in (str(p.get("name")), str(p.get("containerPort"))):
                return dict(c)
    return None


def ready_endpoints(store: Store, ns: str, svc: Obj,
                    also: Callable[[Obj], bool] | None = None) -> list[Obj]:
    """The Service's ready endpoints (what its EndpointSlices list), by pod name; `also`
    keeps other selected pods (the data path's stale view, pod_termination.py)."""
    selector = (svc.get("spec") or {}).get("selector") or {}
    if not selector:
        return []
    pods = [p for p in store.items("pods", ns)
            if match_label_selector({"matchLabels": selector},
                                    p["metadata"].get("labels") or {})
            and (_ready(p) or (also is not None and also(p)))]
    return sorted(pods, key=lambda p: str(p["metadata"]["name"]))


def refused(pod: Obj, what: str = "service") -> KubeError:
    """Nothing listens on the port (no engine, or its engine had SIGTERM)."""
    ip = (pod.get("status") or {}).get("podIP", "")
    return KubeError(503, f"error trying to reach {what}: dial tcp {ip}: connect: "
                     "connection refused", "ServiceUnavailable")


def _port_number(container: Obj, target: Any) -> str:
    for p in container.get("ports") or []:
        if str(target) in (str(p.get("name")), str(p.get("containerPort"))):
            return str(p.get("containerPort"))
    return str(target)


class ServiceProxy:
    def __init__(self, store: Store) -> None:
        self.store, self.engines = store, engines_of(store)
        store.engines = self.engines  # tests set busy_seconds and read counters through it
        self.routers = SglangRouters(store, self.engines)  # SGLang router pods
        self._turn: dict[tuple[str, str], int] = {}
        self.endings = terminations_of(store)  # deleted pods: routed a while, then SIGTERM

    def endpoints(self, ns: str, svc: Obj) -> list[Obj]:
        """Where the data path sends a request: the ready endpoints, and for a while a deleted
        pod whose removal has not reached it yet (pod_termination.py)."""
        now = self.store.clock.now()
        return ready_endpoints(self.store, ns, svc,
                               also=lambda p: self.endings.still_routed(p, now))

    async def handle(self, request: Request) -> Response:
        pod, container, port = self._service_target(request.path_params)
        if container is not None and fake_jupyter.serves(pod, container):
            return await self._jupyter(request, pod, container)
        if container is not None and is_router(container):
            status, media, text = self.routers.answer(
                pod, container, port, request.method,
                request.path_params.get("path", ""), await request.body())
            return Response(text, status_code=status, media_type=media)
        if container is None or engine_of(container) is None:
            raise refused(pod)
        return await self._answer(request, pod, container)

    def _service_target(self, params: Any) -> tuple[Obj, Obj | None, str]:
        """The endpoint a request through a Service goes to, its container there (None:
        nothing declares the target port) and the port's number."""
        ns = params["namespace"]
        name, port = split_service(params["service"])
        svc = self.store.find("services", ns, name)
        if svc is None:
            raise KubeError(404, f'services "{name}" not found', "NotFound",
                            {"name": name, "kind": "services"})
        wanted = _service_port(svc, port)
        ready = self.endpoints(ns, svc)
        if not ready:
            raise KubeError(503, f'no endpoints available for service "{name}"',
                            "ServiceUnavailable")
        turn = self._turn.get((ns, name), 0)
        self._turn[(ns, name)] = turn + 1
        pod = ready[turn % len(ready)]
        target = wanted.get("targetPort", wanted.get("port"))
        container = _container_for(pod, target)
        return pod, container, _port_number(container or {}, target)

    async def _answer(self, request: Request, pod: Obj, container: Obj) -> Response:
        path, body = request.path_params.get("path", "").strip("/"), await request.body()
        held = self.engines.busy_seconds if request.method == "POST" and \
            path in COMPLETIONS else 0.0
        if self.endings.refuses(pod, self.store.clock.now()):   # its engine had SIGTERM
            raise refused(pod)
        if held:
            finish_at = self.store.clock.now() + held
            self.endings.accept(pod, finish_at)
            seen = self.engines.seen(pod)
            seen.running += 1
            try:
                await self.store.clock.sleep(held)
            finally:
                seen.running -= 1
            if not self.endings.answered(self.store, pod, finish_at):  # stopped before it
                raise KubeError(502, "error trying to reach service: read: connection reset "
                                "by peer", "BadGateway")
        status, media, text = self.engines.answer(pod, container, request.method, path, body)
        if held and status == 200:
            self.engines.seen(pod).last_answered = self.store.clock.now()
        return Response(text, status_code=status, media_type=media)

    async def handle_pod(self, request: Request) -> Response:
        ns = request.path_params["namespace"]
        name, port = split_service(request.path_params["pod"])
        pod = self.store.find("pods", ns, name)
        if pod is None:
            raise KubeError(404, f'pods "{name}" not found', "NotFound",
                            {"name": name, "kind": "pods"})
        if (pod.get("status") or {}).get("phase") != "Running":
            raise KubeError(503, f'pod "{name}" is not running', "ServiceUnavailable")
        container = _container_for(pod, port) if port else \
            ((pod.get("spec") or {}).get("containers") or [None])[0]
        if container is not None and fake_jupyter.serves(pod, container):
            return await self._jupyter(request, pod, container)
        if container is None or engine_of(container) is None:
            raise refused(pod, "pod")
        return await self._answer(request, pod, container)

    async def _jupyter(self, request: Request, pod: Obj, container: Obj) -> Response:
        if self.endings.refuses(pod, self.store.clock.now()):
            raise refused(pod)
        status, media, text = fake_jupyter.answer(
            self.store, pod, container, request.method, request.path_params.get("path", ""),
            dict(request.query_params), await request.body())
        return Response(text, status_code=status, media_type=media)


    async def socket(self, ws: WebSocket) -> None:
        """A WebSocket through a Service: kube-apiserver's proxy is upgrade-aware and splices
        the two connections (kubernetes pkg/registry/core/service/proxy.go, ProxyREST.Connect
        with k8s.io/apimachinery pkg/util/proxy/upgradeaware.go). Here only the fake Jupyter
        server's kernels accept one; anything else is refused as a dial would fail."""
        try:
            pod, container, _ = self._service_target(ws.path_params)
            if container is None or not fake_jupyter.serves(pod, container) or \
                    self.endings.refuses(pod, self.store.clock.now()):
                raise refused(pod)
        except KubeError as err:
            return await refuse(err, ws.scope, ws.receive, ws.send)
        found = fake_jupyter.socket_kernel(self.store, pod, container,
                                           ws.path_params.get("path", ""),
                                           dict(ws.query_params))
        if isinstance(found, int):
            return await ws.send_denial_response(Response(status_code=found))
        await ws.accept()   # no subprotocol: the JSON wire protocol (fake_kernel.py)
        found.connections += 1
        try:
            while True:
                await fake_kernel.on_message(self.store, found, await ws.receive_json(),
                                             ws.send_json)
        except (WebSocketDisconnect, ValueError):
            pass   # the client went away, or sent what is not a JSON message
        finally:
            found.connections -= 1


def proxy_routes(store: Store) -> list[BaseRoute]:
    handler = ServiceProxy(store)
    return [WebSocketRoute(PREFIX + "/{path:path}", handler.socket),
            Route(PREFIX + "/{path:path}", handler.handle, methods=METHODS),
            Route(PREFIX, handler.handle, methods=METHODS),
            Route(POD_PREFIX + "/{path:path}", handler.handle_pod, methods=METHODS),
            Route(POD_PREFIX, handler.handle_pod, methods=METHODS)]
