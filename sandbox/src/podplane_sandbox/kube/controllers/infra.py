"""Services of type LoadBalancer, PVC binding, owner-reference GC and namespace cleanup."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.controllers.framework import Controller, Key
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, quantity

Obj = dict[str, Any]


class LoadBalancerController(Controller):
    primary = "services"

    def reconcile(self, key: Key) -> float | None:
        svc = self.primary_obj(key)
        if svc is None or svc.get("spec", {}).get("type") != "LoadBalancer":
            return None
        if (svc.get("status") or {}).get("loadBalancer", {}).get("ingress"):
            return None
        uid = svc["metadata"]["uid"].replace("-", "")
        host = f"a{uid[:32]}-{int(uid[:8], 16) % 10**10:010d}.us-west-2.elb.amazonaws.com"
        self.ctx.update_status("services", svc, {"loadBalancer": {"ingress": [{"hostname": host}]}})
        self.ctx.event(svc, "EnsuredLoadBalancer", "Ensured load balancer")
        return None


# Dynamic provisioning on EBS is done by the EBS CSI driver's controller (external-provisioner
# sidecar); the in-tree `kubernetes.io/aws-ebs` provisioner is migrated to the same driver
# (Kubernetes docs "Storage Classes": AWS EBS, CSI migration GA in 1.25). Without a ready
# controller the claim stays Pending with the PV controller's ExternalProvisioning event
# (kubernetes pkg/controller/volume/persistentvolume/pv_controller.go provisionClaim).
# EKS docs "Store Kubernetes volumes with Amazon EBS": the driver is an add-on to install.
EXTERNAL = {"ebs.csi.aws.com": ("kube-system", "ebs-csi-controller"),
            "kubernetes.io/aws-ebs": ("kube-system", "ebs-csi-controller")}


def _waiting(provisioner: str) -> str:
    driver = "ebs.csi.aws.com" if provisioner in EXTERNAL else provisioner
    return (f"Waiting for a volume to be created either by the external provisioner "
            f"'{driver}' or manually by the system administrator. If volume creation is "
            "delayed, please verify that the provisioner is running and correctly registered.")


def _reserved_for(ref: Obj, pvc: Obj) -> bool:
    """A PV whose claimRef names this claim (namespace and name, and its uid if set) is kept
    for it: Kubernetes docs, "Persistent Volumes", "Reserving a PersistentVolume"."""
    meta = pvc["metadata"]
    return (ref.get("namespace"), ref.get("name")) == (meta.get("namespace"), meta["name"]) \
        and ref.get("uid") in (None, meta.get("uid"))


class VolumeBinder(Controller):
    primary = "persistentvolumeclaims"

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        meta = event.obj["metadata"]
        provisioner = event.rt_key == "apps/deployments" and \
            (meta.get("namespace"), meta["name"]) in EXTERNAL.values()
        if provisioner or event.rt_key in ("persistentvolumes", "storage.k8s.io/storageclasses"):
            for pvc in self.ctx.store.items(self.primary):
                if (pvc.get("status") or {}).get("phase") != "Bound":
                    yield (pvc["metadata"]["namespace"], pvc["metadata"]["name"])

    def reconcile(self, key: Key) -> float | None:
        pvc = self.primary_obj(key)
        if pvc is None or (pvc.get("status") or {}).get("phase") == "Bound":
            return None
        spec = pvc.get("spec") or {}
        want = quantity(((spec.get("resources") or {}).get("requests") or {}).get("storage", 0))
        cls = spec.get("storageClassName")
        pv = self._match(pvc, want, cls) or self._provision(pvc, want, cls)
        if pv is None:
            if (pvc.get("status") or {}).get("phase") != "Pending":
                self.ctx.update_status(self.primary, pvc, {"phase": "Pending"})
            return None
        bound_pv = clone(pv)
        bound_pv["spec"]["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": pvc["metadata"]["namespace"],
            "name": pvc["metadata"]["name"],
            "uid": pvc["metadata"]["uid"],
        }
        bound_pv = self.ctx.update("persistentvolumes", bound_pv)
        self.ctx.update_status("persistentvolumes", bound_pv, {"phase": "Bound"})
        claim = clone(pvc)
        claim["spec"]["volumeName"] = pv["metadata"]["name"]
        claim = self.ctx.update(self.primary, claim)
        self.ctx.update_status(
            self.primary,
            claim,
            {
                "phase": "Bound",
                "accessModes": pv["spec"].get("accessModes") or [],
                "capacity": pv["spec"].get("capacity") or {},
            },
        )
        return None

    def _match(self, pvc: Obj, want: float, cls: str | None) -> Obj | None:
        fits = []
        spec = pvc.get("spec") or {}
        named = spec.get("volumeName")  # a claim naming its PV binds to that one only
        for pv in self.ctx.store.items("persistentvolumes"):
            if named and pv["metadata"]["name"] != named:
                continue
            pspec = pv.get("spec") or {}
            ref = pspec.get("claimRef")
            if (ref and not _reserved_for(ref, pvc)) or (pv.get("status") or {}).get(
                    "phase") not in (None, "Available"):
                continue
            if (pspec.get("storageClassName") or "") != (cls or ""):
                continue
            if not set(spec.get("accessModes") or []) <= set(pspec.get("accessModes") or []):
                continue
            size = quantity((pspec.get("capacity") or {}).get("storage", 0))
            if size >= want:
                fits.append((size, pv["metadata"]["name"], pv))
        return min(fits, key=lambda f: (f[0], f[1]))[2] if fits else None

    def _provision(self, pvc: Obj, want: float, cls: str | None) -> Obj | None:
        sc = self.ctx.store.find("storage.k8s.io/storageclasses", "", cls) if cls else None
        if sc is None:
            return None
        if not self._provisioner_runs(sc.get("provisioner", "")):
            if (pvc.get("status") or {}).get("phase") != "Pending":
                self.ctx.event(pvc, "ExternalProvisioning", _waiting(sc.get("provisioner", "")))
            return None
        storage = ((pvc["spec"].get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        pv = self.ctx.create(
            "persistentvolumes",
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {
                    "name": f"pvc-{pvc['metadata']['uid']}",
                    "annotations": {"pv.kubernetes.io/provisioned-by": sc.get("provisioner", "")},
                },
                "spec": {
                    "capacity": {"storage": storage},
                    "accessModes": pvc["spec"].get("accessModes") or ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy", "Delete"),
                    "storageClassName": cls,
                    "csi": {
                        "driver": sc.get("provisioner", ""),
                        "volumeHandle": f"vol-{pvc['metadata']['uid'][:17]}",
                    },
                },
            },
        )
        return self.ctx.update_status("persistentvolumes", pv, {"phase": "Available"})


    def _provisioner_runs(self, provisioner: str) -> bool:
        where = EXTERNAL.get(provisioner)
        if where is None:
            return True
        dep = self.ctx.store.find("apps/deployments", *where)
        return bool(((dep or {}).get("status") or {}).get("readyReplicas"))


class GarbageCollector(Controller):
    """Deletes dependents whose owners are gone; finishes foreground deletions."""

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        me = (event.rt_key, meta.get("namespace", ""), meta["name"])
        if event.type == "DELETED":
            yield from self.ctx.store.dependents(meta["uid"])
            for ref in meta.get("ownerReferences") or []:
                owner = self.ctx.store.by_uid(ref.get("uid", ""))
                if owner is not None and owner["metadata"].get("deletionTimestamp"):
                    yield self._key_of(owner)
        elif "foregroundDeletion" in (meta.get("finalizers") or []) and meta.get(
            "deletionTimestamp"
        ):
            yield me

    def _key_of(self, obj: Obj) -> Key:
        for rt in self.ctx.store.registry.all():
            if rt.kind == obj["kind"] and obj["apiVersion"] in (
                rt.api_version,
                *[rt.api_version_for(v) for v in rt.served_versions()],
            ):
                return (rt.key, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        return ("", "", "")

    def initial_keys(self) -> Iterable[Key]:
        return ()

    def reconcile(self, key: Key) -> float | None:
        rt_key, ns, name = key  # type: ignore[misc]
        obj = self.ctx.store.find(rt_key, ns, name)
        if obj is None:
            return None
        meta = obj["metadata"]
        if meta.get("deletionTimestamp") and "foregroundDeletion" in (meta.get("finalizers") or []):
            deps = self.ctx.store.dependents(meta["uid"])
            for dep_key, dep_ns, dep_name in deps:
                dep = self.ctx.store.find(dep_key, dep_ns, dep_name)
                if dep is not None:
                    self.ctx.delete(dep_key, dep, "Foreground")
            if not self.ctx.store.dependents(meta["uid"]):
                done = clone(obj)
                done["metadata"]["finalizers"] = [
                    f for f in meta["finalizers"] if f != "foregroundDeletion"
                ]
                self.ctx.update(rt_key, done)
            return None
        refs = meta.get("ownerReferences") or []
        if refs and all(self.ctx.store.by_uid(r.get("uid", "")) is None for r in refs):
            self.ctx.delete(rt_key, obj)
        return None


class NamespaceController(Controller):
    primary = "namespaces"

    def reconcile(self, key: Key) -> float | None:
        ns = self.primary_obj(key)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return None
        name = ns["metadata"]["name"]
        left = 0
        for rt in self.ctx.store.registry.all():
            if not rt.namespaced:
                continue
            for obj in self.ctx.store.items(rt.key, name):
                left += 1
                if not obj["metadata"].get("deletionTimestamp"):
                    self.ctx.store.delete(
                        rt, name, obj["metadata"]["name"], {"gracePeriodSeconds": 0}
                    )
        if left and any(
            self.ctx.store.items(rt.key, name)
            for rt in self.ctx.store.registry.all()
            if rt.namespaced
        ):
            return 1.0
        self.ctx.store.remove_now(self.ctx.rt("namespaces"), ns)
        return None
