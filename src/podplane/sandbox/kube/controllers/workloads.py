"""Workload controllers: Deployments -> ReplicaSets -> Pods, DaemonSets, Jobs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from podplane.sandbox.kube.controllers.framework import Controller, Key, owner_ref
from podplane.sandbox.kube.controllers.scheduling import node_matches
from podplane.sandbox.kube.store import Event
from podplane.sandbox.kube.util import clone

Obj = dict[str, Any]


def _alive(pods: list[Obj]) -> list[Obj]:
    return [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]


def _ready(pod: Obj) -> bool:
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
        pods = _alive(self.ctx.owned(rs, "pods"))
        want = int(rs["spec"].get("replicas", 1))
        template = rs["spec"].get("template") or {}
        for _ in range(want - len(pods)):
            pods.append(
                self.ctx.create(
                    "pods", pod_from_template(rs, template, rs["metadata"]["name"] + "-")
                )
            )
        if len(pods) > want:
            doomed = sorted(pods, key=lambda p: (_ready(p), p["metadata"]["name"]))[
                : len(pods) - want
            ]
            for pod in doomed:
                self.ctx.delete("pods", pod)
            pods = [p for p in pods if p not in doomed]
        ready = sum(1 for p in pods if _ready(p))
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
        if new is None and not spec.get("paused"):
            new = self._new_rs(dep, template, h, want)
        for rs in sets:
            target = want if rs is new else 0
            if rs["spec"].get("replicas") != target:
                patched = clone(rs)
                patched["spec"]["replicas"] = target
                self.ctx.update("apps/replicasets", patched)
        self._status(dep, want, new, sets)
        return None

    def _new_rs(self, dep: Obj, template: Obj, h: str, want: int) -> Obj:
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
        pods = _alive(self.ctx.owned(ds, "pods"))
        by_node = {p["spec"].get("nodeName"): p for p in pods}
        for name in sorted(set(nodes) - set(by_node)):
            pod = pod_from_template(ds, template, ds["metadata"]["name"] + "-")
            pod["spec"]["nodeName"] = name
            pod["spec"]["tolerations"] = probe["spec"]["tolerations"]
            self.ctx.create("pods", pod)
        for name, pod in by_node.items():
            if name not in nodes:
                self.ctx.delete("pods", pod)
        pods = [p for p in _alive(self.ctx.owned(ds, "pods")) if p["spec"].get("nodeName") in nodes]
        ready = sum(1 for p in pods if _ready(p))
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


class JobController(Controller):
    primary, owned = "batch/jobs", ("pods",)

    def reconcile(self, key: Key) -> float | None:
        job = self.primary_obj(key)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return None
        spec, status = job["spec"], clone(job.get("status") or {})
        if any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in status.get("conditions") or []
        ):
            return None
        completions = int(spec.get("completions") or 1)
        parallelism = int(spec.get("parallelism", 1))
        pods = self.ctx.owned(job, "pods")
        phase = lambda p: (p.get("status") or {}).get("phase")  # noqa: E731
        succeeded = sum(1 for p in pods if phase(p) == "Succeeded")
        failed = sum(1 for p in pods if phase(p) == "Failed")
        active = _alive(pods)
        now = self.ctx.now_iso()
        status.setdefault("startTime", now)
        if failed > int(spec.get("backoffLimit", 6)):
            for p in active:
                self.ctx.delete("pods", p)
            status["conditions"] = _job_conditions(
                now, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
            )
            active = []
        elif succeeded >= completions:
            status["conditions"] = _job_conditions(
                now, "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
            )
            status["completionTime"] = now
        else:
            self._start_pods(job, pods, active, succeeded, completions, parallelism)
            active = _alive(self.ctx.owned(job, "pods"))
        status.update(
            active=len(active),
            succeeded=succeeded,
            failed=failed,
            ready=sum(1 for p in active if _ready(p)),
            terminating=0,
        )
        self.ctx.update_status(self.primary, job, status)
        return None

    def _start_pods(
        self,
        job: Obj,
        pods: list[Obj],
        active: list[Obj],
        succeeded: int,
        completions: int,
        parallelism: int,
    ) -> None:
        indexed = job["spec"].get("completionMode") == "Indexed"
        done_or_running = {
            (p["metadata"].get("labels") or {}).get("batch.kubernetes.io/job-completion-index")
            for p in pods
            if (p.get("status") or {}).get("phase") == "Succeeded" or p in active
        }
        free = [str(i) for i in range(completions) if str(i) not in done_or_running]
        for n in range(min(parallelism - len(active), completions - succeeded - len(active))):
            extra = {
                "job-name": job["metadata"]["name"],
                "batch.kubernetes.io/job-name": job["metadata"]["name"],
                "controller-uid": job["metadata"]["uid"],
                "batch.kubernetes.io/controller-uid": job["metadata"]["uid"],
            }
            name = job["metadata"]["name"] + "-"
            if indexed and n < len(free):
                extra["batch.kubernetes.io/job-completion-index"] = free[n]
                name += f"{free[n]}-"
            self.ctx.create(
                "pods", pod_from_template(job, job["spec"].get("template") or {}, name, extra)
            )


def _job_conditions(now: str, kind: str, reason: str, message: str) -> list[Obj]:
    target = "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget"
    return [
        {
            "type": target,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastProbeTime": now,
            "lastTransitionTime": now,
        },
        {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastProbeTime": now,
            "lastTransitionTime": now,
        },
    ]


class StatefulSetController(Controller):
    """Ordinal pods name-0..name-(n-1), with PVCs from volumeClaimTemplates."""

    primary, owned = "apps/statefulsets", ("pods",)

    def reconcile(self, key: Key) -> float | None:
        sts = self.primary_obj(key)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return None
        name, ns = sts["metadata"]["name"], sts["metadata"]["namespace"]
        want = int(sts["spec"].get("replicas", 1))
        pods = {p["metadata"]["name"]: p for p in _alive(self.ctx.owned(sts, "pods"))}
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
                pods[pod_name] = self.ctx.create("pods", pod)
        for pod_name, pod in pods.items():
            if int(pod_name.rsplit("-", 1)[-1]) >= want:
                self.ctx.delete("pods", pod)
        live = [p for n, p in pods.items() if int(n.rsplit("-", 1)[-1]) < want]
        ready = sum(1 for p in live if _ready(p))
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
