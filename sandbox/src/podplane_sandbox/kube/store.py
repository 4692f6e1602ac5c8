"""The object store: objects by resource type, a global resourceVersion, an event history
for watches, admission hooks, deletion semantics, and a JSON snapshot on disk.

Everything runs on one event loop, so operations are plain synchronous calls. Returned
objects are the stored ones: callers copy before they change anything.
"""

from __future__ import annotations

import json
import os
import random
import string
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.kube import errors
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.resources import Registry, ResourceType
from podplane_sandbox.kube.util import clone, iso

Obj = dict[str, Any]
HISTORY = 50_000
Admit = Callable[[ResourceType, Obj, Obj | None], None]
DEFAULT_GRACE_SECONDS = 30  # PodSpec.terminationGracePeriodSeconds default


def grace_seconds(pod: Obj, options: Obj) -> int:
    """deletionGracePeriodSeconds of a pod delete (the request's, else the pod's, else 30)."""
    asked = options.get("gracePeriodSeconds")
    if asked is not None:
        return int(asked)
    spec = pod.get("spec") or {}
    return int(spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS))


@dataclass(frozen=True)
class Event:
    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    rt_key: str
    obj: Obj


class Store:
    def __init__(self, registry: Registry, clock: VirtualClock, seed: int = 7) -> None:
        self.registry = registry
        self.clock = clock
        self.rv = 1
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {}
        self._dependents: dict[str, set[tuple[str, str, str]]] = {}
        self._uids: dict[str, tuple[str, str, str]] = {}
        self._sorted: dict[str, list[tuple[str, str]]] = {}  # list order, rebuilt on demand
        self.history: deque[Event] = deque(maxlen=HISTORY)
        self.listeners: list[Callable[[Event], None]] = []
        self.admit: dict[str, list[Admit]] = {}
        self.validators: list[Admit] = []
        self.dirty = False
        self.compacted_rv = 0  # watches from before this version get 410 Gone
        self._seed = seed
        self._rng = random.Random(seed)
        self.engines: Any = None  # the fake engines behind pods (service_proxy.py)
        self.buckets: Any = None  # S3 as Mountpoint volumes see it (s3_mounts.py)
        # what lives on volumes rather than in objects (fake_jupyter.py: files on a home
        # PVC), saved with the objects so a restored world keeps them
        self.extras: dict[str, Any] = {}

    # ---- reads ----------------------------------------------------------------
    def get(self, rt: ResourceType, ns: str, name: str) -> Obj:
        obj = self._objects.get(rt.key, {}).get((ns if rt.namespaced else "", name))
        if obj is None:
            raise errors.not_found(rt.key, name, rt.group, rt.plural)
        return obj

    def find(self, rt_key: str, ns: str, name: str) -> Obj | None:
        return self._objects.get(rt_key, {}).get((ns, name))

    def items(self, rt_key: str, ns: str | None = None) -> list[Obj]:
        objs = self._objects.get(rt_key, {})
        if ns is None:
            return list(objs.values())
        return [o for (n, _), o in objs.items() if n == ns]

    def dependents(self, uid: str) -> list[tuple[str, str, str]]:
        return sorted(self._dependents.get(uid, ()))

    def sorted_keys(self, rt_key: str) -> list[tuple[str, str]]:
        keys = self._sorted.get(rt_key)
        if keys is None:
            keys = self._sorted[rt_key] = sorted(self._objects.get(rt_key, {}))
        return keys

    def by_uid(self, uid: str) -> Obj | None:
        where = self._uids.get(uid)
        return self.find(*where) if where else None

    def oldest_rv(self) -> int:
        return self.history[0].rv if self.history else self.rv

    # ---- writes ---------------------------------------------------------------
    def create(self, rt: ResourceType, obj: Obj, ns: str = "") -> Obj:
        obj = clone(obj)
        meta = obj.setdefault("metadata", {})
        if rt.namespaced:
            ns = ns or meta.get("namespace") or "default"
            self._check_namespace(ns)
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
            ns = ""
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + self._suffix()
        name = meta.get("name")
        if not name:
            raise KubeError(
                422,
                f'{rt.kind} "" is invalid: metadata.name: Required value: '
                "name or generateName is required",
                "Invalid",
            )
        if (ns, name) in self._objects.get(rt.key, {}):
            raise errors.already_exists(rt.group, rt.plural, name)
        obj["apiVersion"], obj["kind"] = obj.get("apiVersion") or rt.api_version, rt.kind
        meta["uid"] = self._new_uid()
        meta["creationTimestamp"] = iso(self.clock.now())
        meta["generation"] = 1
        for key in ("resourceVersion", "deletionTimestamp", "managedFields"):
            meta.pop(key, None)
        self._run_admission(rt, obj, None)
        return self._put(rt, obj, "ADDED")

    def update(
        self, rt: ResourceType, obj: Obj, subresource: str | None = None, check_rv: bool = True
    ) -> Obj:
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace", "") if rt.namespaced else ""
        old = self.get(rt, ns, meta.get("name", ""))
        sent_rv = meta.get("resourceVersion")
        if check_rv and sent_rv and sent_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.group, rt.plural, meta.get("name", ""))
        new = self._merge_for_update(rt, old, clone(obj), subresource)
        if new == old:
            return old
        self._run_admission(rt, new, old)
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            return self._remove(rt, new)
        return self._put(rt, new, "MODIFIED")

    def _merge_for_update(
        self, rt: ResourceType, old: Obj, new: Obj, subresource: str | None
    ) -> Obj:
        if subresource == "status":
            merged = clone(old)
            merged["status"] = new.get("status")
            if merged["status"] is None:
                merged.pop("status")
            return merged
        meta = new.setdefault("metadata", {})
        old_meta = old["metadata"]
        for key in (
            "uid",
            "creationTimestamp",
            "namespace",
            "name",
            "generation",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        new["apiVersion"], new["kind"] = old["apiVersion"], old["kind"]
        if "status" in rt.subresources or rt.key == "namespaces":
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if _spec_of(new) != _spec_of(old):
            meta["generation"] = old_meta.get("generation", 1) + 1
        return new

    def delete(self, rt: ResourceType, ns: str, name: str, options: Obj | None = None) -> Obj:
        options = options or {}
        old = self.get(rt, ns, name)
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != old["metadata"]["uid"]:
            raise KubeError(
                409,
                f"Precondition failed: UID in precondition: {pre['uid']}, "
                f"UID in object meta: {old['metadata']['uid']}",
                "Conflict",
            )
        if (
            pre.get("resourceVersion")
            and pre["resourceVersion"] != old["metadata"]["resourceVersion"]
        ):
            raise errors.conflict(rt.group, rt.plural, name)
        policy = options.get("propagationPolicy")
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        if policy == "Orphan":
            self._orphan(old["metadata"]["uid"])
        obj = clone(old)
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if policy == "Foreground" and self.dependents(meta["uid"]):
            if "foregroundDeletion" not in finalizers:
                finalizers.append("foregroundDeletion")
        graceful = self._graceful(rt, obj, options)
        if not finalizers and not graceful:
            return self._remove(rt, old)
        if meta.get("deletionTimestamp"):
            return old
        meta["finalizers"] = finalizers
        meta["deletionTimestamp"] = iso(self.clock.now())
        meta["deletionGracePeriodSeconds"] = (
            grace_seconds(obj, options)  # the pod's own, default 30
            if rt.key == "pods"
            else int(options.get("gracePeriodSeconds") or 0)
        )
        if rt.key == "namespaces":
            obj.setdefault("status", {})["phase"] = "Terminating"
        return self._put(rt, obj, "MODIFIED")

    def _graceful(self, rt: ResourceType, obj: Obj, options: Obj) -> bool:
        """Pods on a node and namespaces are finished by their controllers, not at once."""
        if rt.key == "namespaces":
            return True
        if rt.key != "pods" or options.get("gracePeriodSeconds") == 0:
            return False
        phase = (obj.get("status") or {}).get("phase")
        return bool(obj.get("spec", {}).get("nodeName")) and phase not in ("Succeeded", "Failed")

    def remove_now(self, rt: ResourceType, obj: Obj) -> Obj:
        return self._remove(rt, obj)

    def _orphan(self, uid: str) -> None:
        for rt_key, ns, name in self.dependents(uid):
            rt = self.registry.by_key(rt_key)
            dep = self.find(rt_key, ns, name)
            if rt is None or dep is None:
                continue
            dep = clone(dep)
            refs = dep["metadata"].get("ownerReferences") or []
            dep["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") != uid]
            self.update(rt, dep, check_rv=False)

    # ---- internals ------------------------------------------------------------
    def _check_namespace(self, ns: str) -> None:
        nsobj = self.find("namespaces", "", ns)
        if nsobj is None:
            raise KubeError(
                404, f'namespaces "{ns}" not found', "NotFound", {"name": ns, "kind": "namespaces"}
            )
        if nsobj["metadata"].get("deletionTimestamp"):
            raise KubeError(
                403,
                f"unable to create new content in namespace {ns} because it is being terminated",
                "Forbidden",
            )

    def _run_admission(self, rt: ResourceType, obj: Obj, old: Obj | None) -> None:
        for hook in self.admit.get(rt.key, []):
            hook(rt, obj, old)
        for validate in self.validators:
            validate(rt, obj, old)

    def _new_uid(self) -> str:
        """A UID no stored object holds: Kubernetes never reuses one over a cluster's
        lifetime (docs "Object Names and IDs"), and the owner index (garbage collection,
        `dependents`) relies on it."""
        while True:
            uid = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
            if uid not in self._uids:
                return uid

    def _suffix(self) -> str:
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        return "".join(self._rng.choice(alphabet) for _ in range(5))

    def random_token(self, n: int = 10) -> str:
        return "".join(self._rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))

    def _put(self, rt: ResourceType, obj: Obj, kind: str) -> Obj:
        self.rv += 1
        meta = obj["metadata"]
        meta["resourceVersion"] = str(self.rv)
        key = (meta.get("namespace", ""), meta["name"])
        bucket = self._objects.setdefault(rt.key, {})
        old = bucket.get(key)
        if old is not None:
            self._index_owners(rt.key, old, add=False)
        else:
            self._sorted.pop(rt.key, None)
        bucket[key] = obj
        self._index_owners(rt.key, obj, add=True)
        self._emit(Event(self.rv, kind, rt.key, obj))
        return obj

    def _remove(self, rt: ResourceType, obj: Obj) -> Obj:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        stored = self._objects.get(rt.key, {}).pop(key, None)
        self._sorted.pop(rt.key, None)
        if stored is not None:
            self._index_owners(rt.key, stored, add=False)
        self.rv += 1
        gone = clone(obj)
        gone["metadata"]["resourceVersion"] = str(self.rv)
        self._emit(Event(self.rv, "DELETED", rt.key, gone))
        return gone

    def _index_owners(self, rt_key: str, obj: Obj, add: bool) -> None:
        meta = obj["metadata"]
        entry = (rt_key, meta.get("namespace", ""), meta["name"])
        if add:
            self._uids[meta.get("uid", "")] = entry
        else:
            self._uids.pop(meta.get("uid", ""), None)
        for ref in meta.get("ownerReferences") or []:
            deps = self._dependents.setdefault(ref.get("uid", ""), set())
            if add:
                deps.add(entry)
            else:
                deps.discard(entry)

    def _emit(self, event: Event) -> None:
        self.dirty = True
        if len(self.history) == self.history.maxlen:
            self.compacted_rv = self.history[0].rv
        self.history.append(event)
        for listener in list(self.listeners):
            listener(event)

    # ---- persistence ----------------------------------------------------------
    def snapshot(self) -> str:
        """Serialized on the loop thread, so it is consistent; writing can happen elsewhere."""
        data = {"rv": self.rv, "objects": {k: list(v.values()) for k, v in self._objects.items()},
                "extras": self.extras}
        self.dirty = False
        return json.dumps(data, separators=(",", ":"))

    def save(self, path: Path) -> None:
        write_atomically(path, self.snapshot())

    def load(self, path: Path, on_crd: Callable[[Obj], None]) -> None:
        if not path.exists():
            return
        data = json.loads(path.read_text())
        self.rv = int(data.get("rv", 1))
        objects: dict[str, list[Obj]] = data.get("objects", {})
        self.extras = data.get("extras") or {}
        for crd in objects.get("apiextensions.k8s.io/customresourcedefinitions", []):
            on_crd(crd)
        for rt_key, objs in objects.items():
            bucket = self._objects.setdefault(rt_key, {})
            for obj in objs:
                meta = obj["metadata"]
                bucket[(meta.get("namespace", ""), meta["name"])] = obj
                self._index_owners(rt_key, obj, add=True)
        self.compacted_rv = self.rv
        self.dirty = False
        # A restarted store must not replay its first run's draws: the same seed would hand out
        # the UIDs and generated names of objects it already holds (a job given a DaemonSet's
        # UID "owned" its pods, and its restart deleted them).
        self._rng = random.Random(f"{self._seed}:{self.rv}")


def _spec_of(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def write_atomically(path: Path, text: str) -> None:
    """0600 from the first byte: the store holds Secrets (issue 34, S8)."""
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w") as out:
        out.write(text)
    os.replace(tmp, path)
