"""Kernels of the fake Jupyter server (fake_jupyter.py): the REST resource and the WebSocket a
notebook runs code through, reached through the API server's proxy (service_proxy.py).

Sources: Jupyter Server's REST API (`/api/kernels`: GET lists, POST starts one and answers 201
with the kernel model `id, name, last_activity, execution_state, connections`; DELETE answers
204), "WebSocket kernel wire protocols" (`/api/kernels/<id>/channels`; without the
`v1.kernel.websocket.jupyter.org` subprotocol each frame is one JSON message with its
`channel`), and the Jupyter messaging spec 5.3 (`kernel_info_request` and `execute_request` on
shell; `status` busy/idle, `stream` and `error` on iopub around each reply).

Kernel and message ids are random (uuid4), not drawn from the store's seeded RNG: nothing in
the world keeps them, and drawing would shift every UID made after a notebook ran.

Stricter than a real kernel, and said so in its answers: this one runs no Python. A cell whose
every line is `print(<literal>)` prints the literals; any other cell is an error reply
(`ename` SandboxKernel), so a test sees both directions of the socket.
"""

from __future__ import annotations

import ast
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from podplane_sandbox.kube.util import iso

Obj = dict[str, Any]
Send = Callable[[Obj], Awaitable[None]]
PROTOCOL = "5.3"
LEGACY_ONLY = "the sandbox speaks the JSON protocol only"   # no v1 binary subprotocol


@dataclass
class Kernel:
    id: str
    started: float
    count: int = 0
    connections: int = 0
    last: float = 0.0


@dataclass
class Kernels:
    by_pod: dict[str, dict[str, Kernel]] = field(default_factory=dict)

    def of(self, pod: Obj) -> dict[str, Kernel]:
        return self.by_pod.setdefault(pod["metadata"]["uid"], {})


_KERNELS: weakref.WeakKeyDictionary[Any, Kernels] = weakref.WeakKeyDictionary()


def kernels_of(store: Any, pod: Obj) -> dict[str, Kernel]:
    return _KERNELS.setdefault(store, Kernels()).of(pod)


def model(kernel: Kernel) -> Obj:
    return {"id": kernel.id, "name": "python3", "last_activity": iso(kernel.last or
                                                                    kernel.started),
            "execution_state": "idle", "connections": kernel.connections}


def rest(store: Any, pod: Obj, method: str, rest_path: str) -> tuple[int, Obj | list[Obj] | None]:
    """`api/kernels[/<id>]`: (status, JSON body or None for no content)."""
    kernels = kernels_of(store, pod)
    kid = rest_path[len("api/kernels"):].strip("/")
    if not kid:
        if method == "GET":
            return 200, [model(k) for k in kernels.values()]
        if method == "POST":
            kernel = Kernel(str(uuid.uuid4()), store.clock.now())
            kernels[kernel.id] = kernel
            return 201, model(kernel)
        return 405, {"message": "Method Not Allowed", "reason": None}
    kernel = kernels.get(kid)
    if kernel is None or "/" in kid:
        return 404, {"message": f"Kernel does not exist: {kid}", "reason": None}
    if method == "GET":
        return 200, model(kernel)
    if method == "DELETE":
        del kernels[kid]
        return 204, None
    return 405, {"message": "Method Not Allowed", "reason": None}


def channel_kernel(store: Any, pod: Obj, rest_path: str) -> Kernel | None:
    """The kernel a `api/kernels/<id>/channels` socket is for, or None (404)."""
    parts = rest_path.strip("/").split("/")
    if len(parts) != 4 or parts[:2] != ["api", "kernels"] or parts[3] != "channels":
        return None
    return kernels_of(store, pod).get(parts[2])


async def on_message(store: Any, kernel: Kernel, message: Obj, send: Send) -> None:
    """One client message on the socket: the replies a kernel sends for it."""
    header = message.get("header") or {}
    kind = header.get("msg_type")
    kernel.last = store.clock.now()
    if kind == "kernel_info_request":
        await send(_reply(store, header, "shell", "kernel_info_reply", {
            "status": "ok", "protocol_version": PROTOCOL, "implementation": "sandbox",
            "language_info": {"name": "python"}, "banner": LEGACY_ONLY}))
    elif kind == "execute_request":
        await _execute(store, kernel, header, str((message.get("content") or {}).get("code")),
                       send)


async def _execute(store: Any, kernel: Kernel, header: Obj, code: str, send: Send) -> None:
    kernel.count += 1
    await send(_reply(store, header, "iopub", "status", {"execution_state": "busy"}))
    printed = _prints(code)
    if printed is None:
        error = {"ename": "SandboxKernel", "evalue": "the sandbox's kernel runs only "
                 "print(<literal>) lines", "traceback": []}
        await send(_reply(store, header, "iopub", "error", error))
        reply = {"status": "error", "execution_count": kernel.count, **error}
    else:
        if printed:
            await send(_reply(store, header, "iopub", "stream",
                              {"name": "stdout", "text": printed}))
        reply = {"status": "ok", "execution_count": kernel.count, "user_expressions": {}}
    await send(_reply(store, header, "shell", "execute_reply", reply))
    await send(_reply(store, header, "iopub", "status", {"execution_state": "idle"}))


def _prints(code: str) -> str | None:
    """What `print(<literal>)` lines print, or None for any other code."""
    out = []
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    for node in body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == "print" and not call.keywords):
            return None
        try:
            out.append(" ".join(str(ast.literal_eval(a)) for a in call.args) + "\n")
        except ValueError:
            return None
    return "".join(out)


def _reply(store: Any, parent: Obj, channel: str, kind: str, content: Obj) -> Obj:
    return {"channel": channel, "parent_header": parent, "metadata": {}, "content": content,
            "header": {"msg_id": uuid.uuid4().hex,
                       "msg_type": kind, "session": parent.get("session", ""),
                       "username": "sagemaker-user", "date": iso(store.clock.now()),
                       "version": PROTOCOL}}
