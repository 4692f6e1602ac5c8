"""HyperPod-managed Karpenter, as a cluster sees it (SageMaker docs "Autoscaling on HyperPod
EKS", its node class and node pool pages; ../shared/crds/karpenter/HYPERPOD_NODECLASS.md;
kubernetes-sigs/karpenter NodePool v1 semantics).

While the HyperPod cluster has AutoScaling enabled (AWS side, `autoscaled`), the service serves
the NodePool and HyperpodNodeClass kinds; a HyperpodNodeClass is Ready when every group it
names exists and none runs deep health checks (the node class page: "Instance groups with
DeepHealthChecks (DHC) are not supported", as a DHC keeps pods pending 60-90 minutes; a class
that is not Ready is not used for scaling). For pods the scheduler left Pending, Karpenter
adds nodes to a group of a Ready NodePool whose instance type would fit them (HyperPod
launches them like any node: minutes);
a node of such a group that stays empty past the pool's `consolidateAfter` is removed again,
so a group scales back to zero. Groups not named by any NodePool are never touched.
HyperPod adds and removes those nodes as the cluster's ClusterRole (aws/hyperpod/autoscaling.py):
when that role may not, nothing changes and the NodePool gets a Warning event with the refusal
(the sandbox's stand-in for the NodeClaim's failed launch, which it does not model).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.controllers import instance_types
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key
from podplane_sandbox.kube.controllers.scheduler import pod_requests
from podplane_sandbox.kube.store import Event

Obj = dict[str, Any]
POLL_SECONDS = 10.0
CRDS = "apiextensions.k8s.io/customresourcedefinitions"
POOLS, CLASSES = "karpenter.sh/nodepools", "karpenter.sagemaker.amazonaws.com/hyperpodnodeclasses"
GROUP_LABEL = "sagemaker.amazonaws.com/instance-group-name"
DEFAULT_CONSOLIDATE = 0.0   # NodePool v1 default consolidateAfter: 0s
REGISTRATION_TTL = 15 * 60.0


def controllers(ctx: Ctx, source: Any, eks_cluster_name: str | None) -> list[Controller]:
    if not hasattr(source, "autoscaled_groups"):
        return []
    return [Karpenter(ctx, source, eks_cluster_name)]


def _open(required: list[str] | None = None) -> Obj:
    out: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if required:
        out["required"] = required
    return out


def _crd(group: str, kind: str, plural: str, spec: Obj, categories: list[str]) -> Obj:
    schema = {"type": "object", "required": ["spec"], "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"}, "spec": spec, "status": _open()}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Cluster",
                     "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural,
                               "singular": kind.lower(), "categories": categories},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": schema}}]}}


NODEPOOL_CRD = _crd("karpenter.sh", "NodePool", "nodepools", _open(["template"]),
                    ["karpenter"])
NODECLASS_CRD = _crd("karpenter.sagemaker.amazonaws.com", "HyperpodNodeClass",
                     "hyperpodnodeclasses", {"type": "object", "required": ["instanceGroups"],
                                             "properties": {"instanceGroups": {
                                                 "type": "array", "minItems": 1,
                                                 "maxItems": 10,
                                                 "items": {"type": "string"}}}},
                     ["karpenter"])


def _seconds(text: str | None) -> float:
    """A Karpenter duration ("30s", "5m", "1h"; "Never" -> infinity)."""
    if not text:
        return DEFAULT_CONSOLIDATE
    if text == "Never":
        return math.inf
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units.get(text[-1], 1)


class Karpenter(Controller):
    primary = "namespaces"   # one polling key, like the add-on controller
    POLL: Key = ("", "*karpenter*")

    def __init__(self, ctx: Ctx, source: Any, eks_cluster_name: str | None) -> None:
        super().__init__(ctx)
        self.source, self.cluster = source, eks_cluster_name
        self.empty_since: dict[str, float] = {}
        self.pool_of: dict[str, Obj] = {}       # group -> the NodePool that scales it
        self.nominated: dict[str, float] = {}   # pod uid -> when a node was launched for it

    def initial_keys(self) -> Iterable[Key]:
        yield self.POLL

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.rt_key in (POOLS, CLASSES):
            yield self.POLL

    def reconcile(self, key: Key) -> float | None:
        groups = self.source.autoscaled_groups(self.cluster)
        if groups is None:
            self.empty_since.clear()
            return POLL_SECONDS
        self._serve_kinds()
        pools = self._pools(groups)
        if pools:
            self._scale_out(groups, pools)
            self._scale_in(groups, pools)
        return POLL_SECONDS

    def _serve_kinds(self) -> None:
        for crd in (NODEPOOL_CRD, NODECLASS_CRD):
            if self.ctx.store.find(CRDS, "", crd["metadata"]["name"]) is None:
                self.ctx.create(CRDS, crd)

    def _pools(self, groups: dict[str, Obj]) -> dict[str, float]:
        """Group -> consolidateAfter, for groups of a NodePool whose node class is Ready."""
        ready: dict[str, list[str]] = {}
        for nc in self.ctx.store.items(CLASSES):
            named = list((nc.get("spec") or {}).get("instanceGroups") or [])
            cond = _readiness(named, groups)
            cond["lastTransitionTime"] = self.ctx.now_iso()
            old = ((nc.get("status") or {}).get("conditions") or [{}])[0]
            if (old.get("status"), old.get("message")) != (cond["status"], cond["message"]):
                self.ctx.update_status(CLASSES, nc, {"conditions": [cond]})
            if cond["status"] == "True":
                ready[nc["metadata"]["name"]] = named
        out: dict[str, float] = {}
        self.pool_of = {}
        for pool in self.ctx.store.items(POOLS):
            spec = pool.get("spec") or {}
            ref = ((spec.get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
            after = _seconds((spec.get("disruption") or {}).get("consolidateAfter"))
            for group in ready.get(ref.get("name", ""), []):
                out[group] = after
                self.pool_of[group] = pool
        return out

    def _refused(self, group: str, refusal: str | None) -> bool:
        """A launch or removal HyperPod refused: a Warning on the group's NodePool."""
        if refusal is None:
            return False
        self.ctx.event(self.pool_of[group], "FailedScaling", refusal, "Warning")
        return True

    def _pending(self) -> list[Obj]:
        out = []
        for pod in self.ctx.store.items("pods"):
            conds = (pod.get("status") or {}).get("conditions") or []
            if not pod.get("spec", {}).get("nodeName") and any(
                    c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                    for c in conds):
                out.append(pod)
        return out

    def _nodes(self, group: str) -> list[Obj]:
        return [n for n in self.ctx.store.items("nodes")
                if (n["metadata"].get("labels") or {}).get(GROUP_LABEL) == group]

    def _scale_out(self, groups: dict[str, Obj], pools: dict[str, float]) -> None:
        """One node per pending pod that fits a group, once: a pod already given a node is
        not given another until that launch is overdue (Karpenter's NodeClaim registration
        TTL, 15 minutes), as a NodeClaim stands for the node on its way."""
        now = self.ctx.now()
        wanted: dict[str, list[str]] = {}
        pending = self._pending()
        live = {p["metadata"]["uid"] for p in pending}
        self.nominated = {u: t for u, t in self.nominated.items() if u in live}
        for pod in pending:
            uid = pod["metadata"]["uid"]
            if now - self.nominated.get(uid, -math.inf) < REGISTRATION_TTL:
                continue
            group = self._group_for(pod, groups, pools)
            if group is not None:
                wanted.setdefault(group, []).append(uid)
        for group, uids in wanted.items():
            # a refused launch is retried once the registration TTL has passed, like one lost
            self._refused(group, self.source.add_autoscaled_nodes(
                groups[group]["cluster"], group, len(uids)))
            self.nominated.update({u: now for u in uids})

    def _group_for(self, pod: Obj, groups: dict[str, Obj], pools: dict[str, float]
                   ) -> str | None:
        need = pod_requests(pod)
        selector = (pod.get("spec") or {}).get("nodeSelector") or {}
        for group in sorted(pools):
            itype = groups[group]["instance_type"]
            labels = {GROUP_LABEL: group, "node.kubernetes.io/instance-type": itype}
            if any(k in labels and labels[k] != v for k, v in selector.items()):
                continue
            cpu, mem, gpu, _, _ = instance_types.capacity(itype)
            if need.get("nvidia.com/gpu", 0) <= gpu and need.get("cpu", 0) <= cpu and \
                    need.get("memory", 0) <= mem * 2**30:
                return group
        return None

    def _scale_in(self, groups: dict[str, Obj], pools: dict[str, float]) -> None:
        busy = {p["spec"]["nodeName"] for p in self.ctx.store.items("pods")
                if p.get("spec", {}).get("nodeName") and not _daemon(p)
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")}
        now = self.ctx.now()
        for group, after in pools.items():
            idle = []
            for node in self._nodes(group):
                name = node["metadata"]["name"]
                if name in busy or node["metadata"].get("deletionTimestamp"):
                    self.empty_since.pop(name, None)
                    continue
                since = self.empty_since.setdefault(name, now)
                if now - since >= after:
                    idle.append(name.removeprefix("hyperpod-"))
            if idle and not self._refused(group, self.source.remove_autoscaled_nodes(
                    groups[group]["cluster"], group, idle)):
                for iid in idle:
                    self.empty_since.pop(f"hyperpod-{iid}", None)


def _readiness(named: list[str], groups: dict[str, Obj]) -> Obj:
    """A HyperpodNodeClass's Ready condition (without its time)."""
    missing = [g for g in named if g not in groups]
    if missing:
        return {"type": "Ready", "status": "False", "reason": "InstanceGroupNotFound",
                "message": f"instance groups not found: {missing}"}
    checked = [g for g in named if groups[g].get("deep_health_checks")]
    if checked:
        return {"type": "Ready", "status": "False", "reason": "InstanceGroupNotSupported",
                "message": "instance groups with deep health checks are not supported: "
                           f"{checked}"}
    return {"type": "Ready", "status": "True", "reason": "Ready", "message": ""}


def _daemon(pod: Obj) -> bool:
    return any(r.get("kind") == "DaemonSet" for r in pod["metadata"].get("ownerReferences") or [])



