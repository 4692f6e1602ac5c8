"""A small controller framework on the virtual clock.

A controller names the resource it reconciles (`primary`) and the resources it owns
(`owned`); store events map to keys, keys are reconciled one at a time, and a reconcile may
ask to run again after some virtual seconds. Everything runs on the emulator's event loop,
and `settle()` drains all due work so stepped tests are deterministic.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Hashable, Iterable
from typing import Any

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.contracts import NodeSource
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.resources import ResourceType
from podplane_sandbox.kube.store import Event, Store
from podplane_sandbox.kube.util import clone, iso

log = logging.getLogger(__name__)
Obj = dict[str, Any]
Key = Hashable


class Ctx:
    """What controllers use: the store with convenience writes, the clock, the node source."""

    def __init__(self, store: Store, clock: VirtualClock, node_source: NodeSource) -> None:
        self.store, self.clock, self.node_source = store, clock, node_source
        self.instant: float | None = None  # the one time a running reconcile sees

    def rt(self, key: str) -> ResourceType:
        rt = self.store.registry.by_key(key)
        assert rt is not None, key
        return rt

    def now(self) -> float:
        return self.clock.now() if self.instant is None else self.instant

    def now_iso(self) -> str:
        return iso(self.now())

    def create(self, rt_key: str, obj: Obj) -> Obj:
        return self.store.create(self.rt(rt_key), obj, obj["metadata"].get("namespace", ""))

    def create_pod(self, owner: Obj, pod: Obj) -> Obj:
        """A controller's pod; a refusal (a missing ServiceAccount: 403; a pod the API server
        finds invalid, e.g. a `subPath` with `..`: 422) becomes the owner's `FailedCreate`
        event, as kube-controller-manager reports it, and is retried later."""
        try:
            return self.create("pods", pod)
        except KubeError as exc:
            if exc.code in (403, 422):
                self.event(owner, "FailedCreate", f"Error creating: {exc.message}", "Warning")
            raise

    def update(self, rt_key: str, obj: Obj) -> Obj:
        return self.store.update(self.rt(rt_key), obj, check_rv=False)

    def update_status(self, rt_key: str, obj: Obj, status: Obj) -> Obj:
        if obj.get("status") == status:
            return obj
        new = clone(obj)
        new["status"] = status
        return self.store.update(self.rt(rt_key), new, "status", check_rv=False)

    def delete(self, rt_key: str, obj: Obj, policy: str = "Background") -> None:
        meta = obj["metadata"]
        try:
            self.store.delete(
                self.rt(rt_key),
                meta.get("namespace", ""),
                meta["name"],
                {"propagationPolicy": policy},
            )
        except KubeError as exc:
            if exc.code != 404:
                raise

    def owned(self, owner: Obj, rt_key: str) -> list[Obj]:
        out = []
        for key, ns, name in self.store.dependents(owner["metadata"]["uid"]):
            if key == rt_key and (obj := self.store.find(key, ns, name)) is not None:
                out.append(obj)
        return out

    def event(self, obj: Obj, reason: str, message: str, kind: str = "Normal") -> None:
        meta = obj["metadata"]
        ns = meta.get("namespace") or "default"
        if self.store.find("namespaces", "", ns) is None:
            return
        self.store.create(
            self.rt("events"),
            {
                "metadata": {
                    "name": f"{meta['name']}.{self.store.random_token(16)}",
                    "namespace": ns,
                },
                "involvedObject": {
                    "kind": obj.get("kind"),
                    "name": meta["name"],
                    "namespace": meta.get("namespace", ""),
                    "uid": meta.get("uid"),
                    "apiVersion": obj.get("apiVersion"),
                },
                "reason": reason,
                "message": message,
                "type": kind,
                "count": 1,
                "source": {"component": "podplane-sandbox"},
                "firstTimestamp": self.now_iso(),
                "lastTimestamp": self.now_iso(),
            },
            ns,
        )


def owner_ref(owner: Obj, controller: bool = True) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


class Controller:
    primary: str = ""  # resource key reconciled, e.g. "apps/deployments"
    owned: tuple[str, ...] = ()  # resources whose controller owner is a primary object

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        if event.rt_key == self.primary:
            yield (meta.get("namespace", ""), meta["name"])
        elif event.rt_key in self.owned:
            kind = self.ctx.rt(self.primary).kind
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == kind:
                    yield (meta.get("namespace", ""), ref["name"])

    def initial_keys(self) -> Iterable[Key]:
        if self.primary:
            for obj in self.ctx.store.items(self.primary):
                yield (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])

    def reconcile(self, key: Key) -> float | None:
        """Bring one object towards its desired state; return seconds to run again, or None."""
        raise NotImplementedError

    def primary_obj(self, key: Key) -> Obj | None:
        ns, name = key  # type: ignore[misc]
        return self.ctx.store.find(self.primary, ns, name)


class Runner:
    BATCH = 500

    def __init__(self, ctx: Ctx, controllers: list[Controller]) -> None:
        self.ctx, self.controllers = ctx, controllers
        self._queue: dict[tuple[int, Key], None] = {}
        self._timers: list[tuple[float, int, int, Key]] = []
        self._seq = itertools.count()
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        ctx.store.listeners.append(self._on_event)

    def _on_event(self, event: Event) -> None:
        for i, ctrl in enumerate(self.controllers):
            for key in ctrl.keys_for(event):
                self._queue[(i, key)] = None
        self._poke()

    def enqueue(self, ctrl: Controller, key: Key) -> None:
        self._queue[(self.controllers.index(ctrl), key)] = None
        self._poke()

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _clock_changed(self) -> None:
        if self._stopped or self._loop is None or self._loop.is_closed():
            return
        try:
            self._loop.call_soon_threadsafe(self._poke)
        except RuntimeError:
            pass

    def drain(self, limit: int | None = None) -> int:
        done = 0
        while True:
            now = self.ctx.clock.now()
            while self._timers and self._timers[0][0] <= now:
                _, _, i, key = heapq.heappop(self._timers)
                self._queue[(i, key)] = None
            if not self._queue or (limit is not None and done >= limit):
                return done
            (i, key) = next(iter(self._queue))
            del self._queue[(i, key)]
            self._run_one(i, key)
            done += 1

    def _run_one(self, i: int, key: Key) -> None:
        ctrl = self.controllers[i]
        # One instant per reconcile, and its requeue counted from it: the clock may jump (an
        # advance from another thread) while a reconcile runs, and a wait computed before the
        # jump but added to the time after it would fire that much late.
        started = self.ctx.instant = self.ctx.clock.now()
        try:
            after = ctrl.reconcile(key)
        except KubeError as exc:
            after = 0.5 if exc.code in (409, 404) else 5.0
            log.debug("%s %s: %s", type(ctrl).__name__, key, exc.message)
        except Exception:  # a controller bug must not stop the others
            log.exception("controller %s failed on %s", type(ctrl).__name__, key)
            after = 5.0
        finally:
            self.ctx.instant = None
        if after is not None:
            heapq.heappush(self._timers, (started + after, next(self._seq), i, key))

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self.ctx.clock.on_change(self._clock_changed)
        for i, ctrl in enumerate(self.controllers):
            for key in ctrl.initial_keys():
                self._queue[(i, key)] = None
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        self._stopped = True
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def settle(self) -> None:
        while self.drain(self.BATCH):
            await asyncio.sleep(0)

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            while self.drain(self.BATCH):
                await asyncio.sleep(0)
            self._wake.clear()
            timeout = self._real_until_next_timer()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass

    def _real_until_next_timer(self) -> float:
        if not self._timers or self.ctx.clock.speed <= 0:
            return 1.0
        left = (self._timers[0][0] - self.ctx.clock.now()) / self.ctx.clock.speed
        return min(max(left, 0.001), 1.0)
