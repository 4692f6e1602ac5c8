"""HyperPod instances (from the AWS side's NodeSource) become Node objects with the HyperPod
labels, the health taint, capacity and a Ready condition.

Like real HyperPod nodes: named `hyperpod-<instance id>`, providerID
`aws:///<az-id>/sagemaker/cluster/hyperpod-<cluster id>-<instance id>` (aws/amazon-vpc-cni-k8s
HyperPod tests), no `nvidia.com/gpu.present` label (only GPU Feature Discovery sets it).
GPU/EFA/Neuron resources appear only while their device plugin runs on the node, and fault
labels/conditions only while the health-monitoring agent runs there (node_agents.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from podplane_sandbox.contracts import SandboxNode
from podplane_sandbox.kube.controllers import instance_types, node_agents
from podplane_sandbox.kube.controllers.framework import Controller, Key
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
POLL_SECONDS = 5.0
HEALTH = "sagemaker.amazonaws.com/node-health-status"
MANAGED = "sandbox.podplane.io/managed"
AS_NODE = {"Running", "SystemUpdating", "Failure", "DeepHealthCheckInProgress"}
KUBELET = "v1.36.2-eks-podplane"


def node_name(n: SandboxNode) -> str:
    return f"hyperpod-{n.instance_id}"


def _ip(n: SandboxNode) -> str:
    h = hashlib.sha256(n.instance_id.encode()).digest()
    return f"10.1.{h[0]}.{max(h[1], 1)}"


def provider_id(n: SandboxNode) -> str:
    cluster_id = n.cluster_id or hashlib.sha256(n.cluster_name.encode()).hexdigest()[:12]
    zone = n.availability_zone_id or n.availability_zone
    return f"aws:///{zone}/sagemaker/cluster/hyperpod-{cluster_id}-{n.instance_id}"


def desired_labels(n: SandboxNode, agent: str | None = None) -> dict[str, str]:
    """The node's labels; fault labels only when a health agent reports them (`agent`)."""
    region = n.availability_zone[:-1] if n.availability_zone else "us-west-2"
    labels = {
        "kubernetes.io/hostname": node_name(n),
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": n.instance_type,
        "beta.kubernetes.io/instance-type": n.instance_type,
        "topology.kubernetes.io/zone": n.availability_zone,
        "topology.kubernetes.io/region": region,
        "sagemaker.amazonaws.com/compute-type": "hyperpod",
        "sagemaker.amazonaws.com/cluster-name": n.cluster_name,
        "sagemaker.amazonaws.com/instance-group-name": n.group_name,
        "sagemaker.amazonaws.com/capacity-type": n.capacity_type,
        HEALTH: n.health,
        "sagemaker.amazonaws.com/deep-health-check-status": (
            "InProgress" if n.status == "DeepHealthCheckInProgress" else "Passed"
        ),
    }
    if n.fault_reason and agent:
        for key in ("fault-type", "fault-types"):
            labels[f"sagemaker.amazonaws.com/{key}"] = n.fault_reason.split(":")[0]
        for key in ("fault-reason", "fault-reasons"):
            labels[f"sagemaker.amazonaws.com/{key}"] = n.fault_reason.replace(":", "-")
    labels.update(n.labels)
    return labels


def desired_taints(n: SandboxNode) -> list[Obj]:
    taints = []
    if n.health != "Schedulable":
        taints.append({"key": HEALTH, "value": "Unschedulable", "effect": "NoSchedule"})
    if n.status != "Running":
        taints.append(
            {
                "key": "node.kubernetes.io/unreachable"
                if n.status == "Failure"
                else "node.kubernetes.io/not-ready",
                "effect": "NoSchedule",
            }
        )
    return taints


class NodeController(Controller):
    primary = "nodes"
    POLL: Key = ("", "*")
    eks_cluster_name: str | None = None  # only this EKS cluster's instances, if set

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.rt_key == "pods" and node_agents.is_node_agent(event.obj):
            yield self.POLL

    def initial_keys(self) -> Iterable[Key]:
        yield self.POLL

    def reconcile(self, key: Key) -> float | None:
        wanted = {
            node_name(n): n
            for n in self.ctx.node_source.sandbox_nodes(self.eks_cluster_name)
            if n.status in AS_NODE
        }
        agents = node_agents.agent_pods_by_node(self.ctx.store.items("pods"))
        for name, n in wanted.items():
            self._ensure(name, n, agents.get(name, []))
        for node in self.ctx.store.items("nodes"):
            labels = node["metadata"].get("labels") or {}
            if labels.get(MANAGED) == "true" and node["metadata"]["name"] not in wanted:
                self.ctx.delete("nodes", node)
        return POLL_SECONDS

    def _ensure(self, name: str, n: SandboxNode, pods: list[Obj]) -> None:
        current = self.ctx.store.find("nodes", "", name)
        agent = node_agents.health_agent(pods, name)
        labels = {**desired_labels(n, agent), MANAGED: "true"}
        capacity, allocatable = instance_types.resources(
            n.instance_type, node_agents.registered_plugins(pods, name))
        if current is None:
            node: Obj = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "providerID": provider_id(n),
                    "taints": desired_taints(n),
                },
            }
            current = self.ctx.create("nodes", node)
            self._lease(name)
        else:
            node = clone(current)
            node["metadata"]["labels"] = {**(node["metadata"].get("labels") or {}), **labels}
            if n.fault_reason is None or agent is None:
                for key in ("fault-type", "fault-types", "fault-reason", "fault-reasons"):
                    node["metadata"]["labels"].pop(f"sagemaker.amazonaws.com/{key}", None)
            ours = {"node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready", HEALTH}
            others = [t for t in node["spec"].get("taints") or [] if t.get("key") not in ours]
            node["spec"]["taints"] = others + desired_taints(n)
            if node != current:
                current = self.ctx.update("nodes", node)
        status = self._status(n, current, capacity, allocatable, agent == "conditions")
        self.ctx.update_status("nodes", current, status)

    def _status(
        self, n: SandboxNode, node: Obj, capacity: dict[str, str], allocatable: dict[str, str],
        agent_conditions: bool = False,
    ) -> Obj:
        ready = n.status == "Running"
        old = {c["type"]: c for c in (node.get("status") or {}).get("conditions") or []}
        now = self.ctx.now_iso()

        def cond(kind: str, ok: bool, reason: str, message: str) -> Obj:
            status = "True" if ok else "False"
            prev = old.get(kind)
            since = prev["lastTransitionTime"] if prev and prev["status"] == status else now
            return {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastHeartbeatTime": since,
                "lastTransitionTime": since,
            }

        conditions = [
            cond(
                "MemoryPressure",
                False,
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            cond("DiskPressure", False, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            cond(
                "PIDPressure",
                False,
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            cond(
                "Ready",
                ready,
                "KubeletReady" if ready else "KubeletNotReady",
                "kubelet is posting ready status" if ready else f"instance is {n.status}",
            ),
        ]
        if n.fault_reason and agent_conditions:
            fault = n.fault_reason.split(":")[0]
            conditions.append(
                cond(
                    fault,
                    True,
                    n.fault_reason.split(":")[-1],
                    f"HyperPod health monitoring: {n.fault_reason}",
                )
            )
        return {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": _ip(n)},
                {"type": "Hostname", "address": node_name(n)},
                {"type": "InternalDNS", "address": f"ip-{_ip(n).replace('.', '-')}.ec2.internal"},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": n.instance_id,
                "systemUUID": n.instance_id,
                "bootID": n.instance_id,
                "kernelVersion": "6.1.128-136.201.amzn2023.x86_64",
                "osImage": "Amazon Linux 2023",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kubeletVersion": KUBELET,
                "kubeProxyVersion": KUBELET,
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "phase": "Running",
        }

    def _lease(self, name: str) -> None:
        """The node heartbeat object `kubectl describe node` reads (not renewed here)."""
        if self.ctx.store.find("coordination.k8s.io/leases", "kube-node-lease", name):
            return
        self.ctx.create(
            "coordination.k8s.io/leases",
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "namespace": "kube-node-lease"},
                "spec": {
                    "holderIdentity": name,
                    "leaseDurationSeconds": 40,
                    "renewTime": self.ctx.now_iso().replace("Z", ".000000Z"),
                },
            },
        )
