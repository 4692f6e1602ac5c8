"""EKS add-on -> objects in that cluster's Kubernetes store.

EKS applies an add-on's manifests into the cluster as soon as the add-on is created (its pods
then wait for nodes like any other), upgrades them with the add-on's version, and removes them
when the add-on is deleted (EKS docs "Amazon EKS add-ons"). The AWS side reports add-ons through
`AddonSource` (sandbox/contracts.py), keyed by EKS cluster name so each per-cluster store gets
only its own add-ons; this controller polls it, as the node controller polls HyperPod.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.contracts import AddonSource
from podplane_sandbox.kube.addon_manifests import ADDON, BUILDERS, objects_for
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.store import Event

Obj = dict[str, Any]
POLL_SECONDS = 5.0
KEEP_ON_DELETE = ("Namespace",)  # deleting an add-on leaves its namespace (and kube-system)


def controllers(ctx: Ctx, source: Any, eks_cluster_name: str | None) -> list[Controller]:
    """The add-on controller when the AWS side offers add-ons (a bare NodeSource does not)."""
    if not hasattr(source, "sandbox_addons"):
        return []
    return [AddonObjects(ctx, source, eks_cluster_name)]


class AddonObjects(Controller):
    primary = "namespaces"  # nothing is reconciled per namespace; one polling key
    POLL: Key = ("", "*eks-addons*")

    def __init__(self, ctx: Ctx, source: AddonSource, eks_cluster_name: str | None) -> None:
        super().__init__(ctx)
        self.source, self.cluster = source, eks_cluster_name
        self.applied: dict[str, str] | None = None  # add-on -> version applied

    def keys_for(self, event: Event) -> Iterable[Key]:
        return ()

    def initial_keys(self) -> Iterable[Key]:
        yield self.POLL

    def reconcile(self, key: Key) -> float | None:
        if self.applied is None:
            self.applied = self._found_in_store()
        wanted = {a.name: a.version for a in self.source.sandbox_addons(self.cluster)
                  if a.status != "DELETING"}
        for name, version in wanted.items():
            if self.applied.get(name) != version:
                self._apply(objects_for(name, version))
                self.applied[name] = version
        for name in [n for n in self.applied if n not in wanted]:
            self._remove(objects_for(name, self.applied.pop(name)))
        return POLL_SECONDS

    def _found_in_store(self) -> dict[str, str]:
        """After a restart: what earlier runs applied (the annotation names add-on@version)."""
        found = {}
        for name in BUILDERS:
            first = objects_for(name, "v0")[-1]
            obj = self._find(first)
            if obj is not None:
                ann = (obj["metadata"].get("annotations") or {}).get(ADDON, "")
                found[name] = ann.partition("@")[2]
        return found

    def _rt_key(self, obj: Obj) -> str:
        rt = self.ctx.store.registry.by_kind(obj["apiVersion"], obj["kind"])
        assert rt is not None, obj["kind"]
        return rt.key

    def _find(self, obj: Obj) -> Obj | None:
        meta = obj["metadata"]
        return self.ctx.store.find(self._rt_key(obj), meta.get("namespace", ""), meta["name"])

    def _apply(self, objs: list[Obj]) -> None:
        for obj in objs:
            if obj["kind"] == "Namespace" and self._find(obj) is not None:
                continue  # kube-system and friends stay as they are
            if self._find(obj) is None:
                self.ctx.create(self._rt_key(obj), obj)
            else:
                self.ctx.update(self._rt_key(obj), obj)

    def _remove(self, objs: list[Obj]) -> None:
        for obj in reversed(objs):
            if obj["kind"] in KEEP_ON_DELETE:
                continue
            found = self._find(obj)
            if found is not None:
                try:
                    self.ctx.delete(self._rt_key(obj), found)
                except KubeError:
                    pass  # already going
