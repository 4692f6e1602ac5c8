"""Deployments -> ReplicaSets -> Pods, and helpers the other workload controllers share."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from podplane_sandbox.kube.controllers import rollout
from podplane_sandbox.kube.controllers.framework import Controller, Key, owner_ref
from podplane_sandbox.kube.controllers.pod_ranks import order_for_deletion
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]


def alive_pods(pods: list[Obj]) -> list[Obj]:
    return [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]


def is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def pod_from_template(
    owner: Obj, template: Obj, name_prefix: str, extra_labels: dict[str, str] | None = None
) -> Obj:
    meta = clone(template.get("metadata") or {})
    labels = {**(meta.get("labels") or {}), **(extra_labels or {})}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": name_prefix,
            "namespace": owner["metadata"]["namespace"],
            "labels": labels,
            "annotations": meta.get("annotations") or {},
            "ownerReferences": [owner_ref(owner)],
        },
        "spec": clone(template.get("spec") or {}),
    }


class ReplicaSetController(Controller):
    primary, owned = "apps/replicasets", ("pods",)

    def reconcile(self, key: Key) -> float | None:
        rs = self.primary_obj(key)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return None
        pods = alive_pods(self.ctx.owned(rs, "pods"))
        want = int(rs["spec"].get("replicas", 1))
        template = rs["spec"].get("template") or {}
        for _ in range(want - len(pods)):
            pod = self.ctx.create_pod(
                rs, pod_from_template(rs, template, rs["metadata"]["name"] + "-")
            )
            pods.append(pod)
            self.ctx.event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
        if len(pods) > want:
            # kube-controller-manager's victim order (pod_ranks.py, with its sources)
            doomed = order_for_deletion(pods, self.ctx.now())[: len(pods) - want]
            for pod in doomed:
                self.ctx.delete("pods", pod)
            pods = [p for p in pods if p not in doomed]
        ready = sum(1 for p in pods if is_ready(p))
        self.ctx.update_status(
            self.primary,
            rs,
            {
                "replicas": len(pods),
                "fullyLabeledReplicas": len(pods),
                "readyReplicas": ready,
                "availableReplicas": ready,
                "observedGeneration": rs["metadata"].get("generation", 1),
            },
        )
        return None


def template_hash(template: Obj) -> str:
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[int(digest[i : i + 2], 16) % len(alphabet)] for i in range(0, 20, 2))


class DeploymentController(Controller):
    primary, owned = "apps/deployments", ("apps/replicasets",)

    def reconcile(self, key: Key) -> float | None:
        dep = self.primary_obj(key)
        if dep is None or dep["metadata"].get("deletionTimestamp"):
            return None
        spec = dep["spec"]
        want = int(spec.get("replicas", 1))
        template = spec.get("template") or {}
        h = template_hash(template)
        sets = [
            rs
            for rs in self.ctx.owned(dep, "apps/replicasets")
            if not rs["metadata"].get("deletionTimestamp")
        ]
        new = next(
            (
                rs
                for rs in sets
                if (rs["metadata"].get("labels") or {}).get("pod-template-hash") == h
            ),
            None,
        )
        olds = sorted((rs for rs in sets if rs is not new),
                      key=lambda rs: (rs["metadata"].get("creationTimestamp", ""),
                                      rs["metadata"]["name"]))
        if spec.get("paused"):  # a paused Deployment starts no new ReplicaSet
            self._status(dep, want, new, sets)
            return None
        new_size, old_sizes = self._sizes(spec, want, new, olds)
        if new is None:
            new = self._new_rs(dep, template, h, new_size)
        for rs, target in [(new, new_size), *zip(olds, old_sizes, strict=True)]:
            if rs["spec"].get("replicas") != target:
                verb = "up" if target > rs["spec"].get("replicas", 0) else "down"
                self.ctx.event(
                    dep,
                    "ScalingReplicaSet",
                    f"Scaled {verb} replica set "
                    f"{rs['metadata']['name']} from {rs['spec'].get('replicas', 0)} "
                    f"to {target}",
                )
                patched = clone(rs)
                patched["spec"]["replicas"] = target
                self.ctx.update("apps/replicasets", patched)
        self._status(dep, want, new, sets)
        return None

    def _sizes(self, spec: Obj, want: int, new: Obj | None, olds: list[Obj]
               ) -> tuple[int, list[int]]:
        """(new set's replicas, each old set's) for this sync (controllers/rollout.py)."""
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            old_pods = any(alive_pods(self.ctx.owned(rs, "pods")) for rs in olds)
            return (0 if old_pods else want), [0] * len(olds)
        current = rollout.replicas(new) if new else 0
        total = current + sum(rollout.replicas(rs) for rs in olds)
        new_size = rollout.new_set_size(spec, want, current, total)
        if new_size > current:  # a sync that scales the new set up leaves the old ones
            return new_size, [rollout.replicas(rs) for rs in olds]
        new_available = rollout.available(new) if new else 0
        return new_size, rollout.old_set_sizes(spec, want, new_size, new_available, olds)

    def _new_rs(self, dep: Obj, template: Obj, h: str, want: int) -> Obj:
        self.ctx.event(
            dep,
            "ScalingReplicaSet",
            f"Scaled up replica set {dep['metadata']['name']}-{h} from 0 to {want}",
        )
        tmpl = clone(template)
        tmpl.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = h
        selector = clone(dep["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = h
        return self.ctx.create(
            "apps/replicasets",
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{dep['metadata']['name']}-{h}",
                    "namespace": dep["metadata"]["namespace"],
                    "labels": tmpl["metadata"]["labels"],
                    "annotations": {
                        "deployment.kubernetes.io/revision": str(
                            dep["metadata"].get("generation", 1)
                        )
                    },
                    "ownerReferences": [owner_ref(dep)],
                },
                "spec": {"replicas": want, "selector": selector, "template": tmpl},
            },
        )

    def _status(self, dep: Obj, want: int, new: Obj | None, sets: list[Obj]) -> None:
        all_sets = {rs["metadata"]["name"]: rs for rs in sets}
        if new is not None:
            all_sets[new["metadata"]["name"]] = (
                self.ctx.store.find(
                    "apps/replicasets", new["metadata"]["namespace"], new["metadata"]["name"]
                )
                or new
            )
        st = lambda rs, k: int((rs.get("status") or {}).get(k, 0))  # noqa: E731
        replicas = sum(st(rs, "replicas") for rs in all_sets.values())
        ready = sum(st(rs, "readyReplicas") for rs in all_sets.values())
        updated = st(all_sets[new["metadata"]["name"]], "replicas") if new else 0
        now = self.ctx.now_iso()
        done = updated == want and replicas == want and ready >= want
        conds = [
            {
                "type": "Available",
                "status": "True" if ready >= want else "False",
                "reason": "MinimumReplicasAvailable"
                if ready >= want
                else "MinimumReplicasUnavailable",
                "message": "Deployment has minimum availability."
                if ready >= want
                else "Deployment does not have minimum availability.",
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            },
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable" if done else "ReplicaSetUpdated",
                "message": f'ReplicaSet "{new["metadata"]["name"] if new else ""}" '
                + ("has successfully progressed." if done else "is progressing."),
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            },
        ]
        old_conds = {c["type"]: c for c in (dep.get("status") or {}).get("conditions") or []}
        for c in conds:
            prev = old_conds.get(c["type"])
            if prev and prev.get("status") == c["status"] and prev.get("reason") == c["reason"]:
                c["lastUpdateTime"] = prev.get("lastUpdateTime", now)
                c["lastTransitionTime"] = prev.get("lastTransitionTime", now)
        status = {
            "observedGeneration": dep["metadata"].get("generation", 1),
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": conds,
        }
        if replicas - ready > 0:
            status["unavailableReplicas"] = replicas - ready
        self.ctx.update_status(self.primary, dep, status)
