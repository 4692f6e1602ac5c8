"""DaemonSets (a pod per matching node) and StatefulSets (ordinal pods with claims)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.controllers.framework import Controller, Key
from podplane_sandbox.kube.controllers.scheduler import node_matches
from podplane_sandbox.kube.controllers.workloads import alive_pods, is_ready, pod_from_template
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]


class DaemonSetController(Controller):
    primary, owned = "apps/daemonsets", ("pods",)

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        if event.rt_key == "nodes":
            yield from self.initial_keys()

    def reconcile(self, key: Key) -> float | None:
        ds = self.primary_obj(key)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return None
        template = ds["spec"].get("template") or {}
        probe = {"spec": {**clone(template.get("spec") or {})}}
        probe["spec"]["tolerations"] = (probe["spec"].get("tolerations") or []) + [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists"},
        ]
        nodes = {
            n["metadata"]["name"]: n
            for n in self.ctx.store.items("nodes")
            if node_matches(probe, n) in (None, "node(s) were not ready")
        }
        pods = alive_pods(self.ctx.owned(ds, "pods"))
        by_node = {p["spec"].get("nodeName"): p for p in pods}
        for name in sorted(set(nodes) - set(by_node)):
            pod = pod_from_template(ds, template, ds["metadata"]["name"] + "-")
            pod["spec"]["nodeName"] = name
            pod["spec"]["tolerations"] = probe["spec"]["tolerations"]
            self.ctx.create_pod(ds, pod)
        for name, pod in by_node.items():
            if name not in nodes:
                self.ctx.delete("pods", pod)
        pods = [
            p for p in alive_pods(self.ctx.owned(ds, "pods")) if p["spec"].get("nodeName") in nodes
        ]
        ready = sum(1 for p in pods if is_ready(p))
        self.ctx.update_status(
            self.primary,
            ds,
            {
                "desiredNumberScheduled": len(nodes),
                "currentNumberScheduled": len(pods),
                "numberReady": ready,
                "numberAvailable": ready,
                "updatedNumberScheduled": len(pods),
                "numberMisscheduled": 0,
                "observedGeneration": ds["metadata"].get("generation", 1),
            },
        )
        return None


class StatefulSetController(Controller):
    """Ordinal pods name-0..name-(n-1), with PVCs from volumeClaimTemplates."""

    primary, owned = "apps/statefulsets", ("pods",)

    def reconcile(self, key: Key) -> float | None:
        sts = self.primary_obj(key)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return None
        name, ns = sts["metadata"]["name"], sts["metadata"]["namespace"]
        want = int(sts["spec"].get("replicas", 1))
        pods = {p["metadata"]["name"]: p for p in alive_pods(self.ctx.owned(sts, "pods"))}
        for i in range(want):
            pod_name = f"{name}-{i}"
            if pod_name not in pods and self.ctx.store.find("pods", ns, pod_name) is None:
                self._claims(sts, i)
                pod = pod_from_template(
                    sts,
                    sts["spec"].get("template") or {},
                    "",
                    {
                        "statefulset.kubernetes.io/pod-name": pod_name,
                        "apps.kubernetes.io/pod-index": str(i),
                    },
                )
                pod["metadata"]["name"] = pod_name
                pod["metadata"].pop("generateName")
                pod["spec"].setdefault("hostname", pod_name)
                if sts["spec"].get("serviceName"):
                    pod["spec"].setdefault("subdomain", sts["spec"]["serviceName"])
                pod["spec"]["volumes"] = (pod["spec"].get("volumes") or []) + [
                    {
                        "name": t["metadata"]["name"],
                        "persistentVolumeClaim": {
                            "claimName": f"{t['metadata']['name']}-{pod_name}"
                        },
                    }
                    for t in sts["spec"].get("volumeClaimTemplates") or []
                ]
                pods[pod_name] = self.ctx.create_pod(sts, pod)
        for pod_name, pod in pods.items():
            if int(pod_name.rsplit("-", 1)[-1]) >= want:
                self.ctx.delete("pods", pod)
        live = [p for n, p in pods.items() if int(n.rsplit("-", 1)[-1]) < want]
        ready = sum(1 for p in live if is_ready(p))
        self.ctx.update_status(
            self.primary,
            sts,
            {
                "replicas": len(live),
                "readyReplicas": ready,
                "currentReplicas": len(live),
                "updatedReplicas": len(live),
                "availableReplicas": ready,
                "observedGeneration": sts["metadata"].get("generation", 1),
            },
        )
        return None

    def _claims(self, sts: Obj, ordinal: int) -> None:
        ns = sts["metadata"]["namespace"]
        for tmpl in sts["spec"].get("volumeClaimTemplates") or []:
            claim = f"{tmpl['metadata']['name']}-{sts['metadata']['name']}-{ordinal}"
            if self.ctx.store.find("persistentvolumeclaims", ns, claim) is None:
                self.ctx.create(
                    "persistentvolumeclaims",
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {
                            "name": claim,
                            "namespace": ns,
                            "labels": (tmpl["metadata"].get("labels") or {}),
                        },
                        "spec": clone(tmpl.get("spec") or {}),
                    },
                )
