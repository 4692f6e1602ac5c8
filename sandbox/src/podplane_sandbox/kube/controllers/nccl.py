"""An all-reduce benchmark's physics: when every pod of a job that runs `all_reduce_perf`
(nccl-tests' binary, or a script of that name) is bound to a node, the job's bus bandwidth is
decided from those nodes' links and written on each pod; its logs (kube/logs.py) then print
nccl-tests' table from it.

The rules, each with its source:
- nccl-tests' bus bandwidth for all-reduce is `algbw * 2(n-1)/n` over n ranks and tends to the
  slowest link's bandwidth for large messages (NVIDIA/nccl-tests doc/PERFORMANCE.md). Across
  nodes that link is the network: the instance type's bandwidth (EC2 "Network
  specifications", instance_types.NETWORK_GBPS) spread over its EFA interfaces.
- A pod reaches only the EFA interfaces it was given (`vpc.amazonaws.com/efa`, the EFA device
  plugin's resource: aws-efa-k8s-device-plugin); with none NCCL falls back to its TCP socket
  transport (NCCL docs, "Environment variables", NCCL_NET: "IB" or "Socket", the AWS OFI
  plugin naming itself "AWS Libfabric").
- Sandbox assumptions, not sourced: EFA runs reach EFA_EFFICIENCY of line rate, sockets
  SOCKET_EFFICIENCY; every message pays LATENCY_US. An `efa_degraded` fault on a node scales
  its links (SandboxNode.efa_link_factor).
- Only rank 0 prints the table (nccl-tests prints from its first rank); every rank prints
  NCCL's transport line under NCCL_DEBUG=INFO.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.controllers.framework import Controller, Key
from podplane_sandbox.kube.controllers.instance_types import capacity, network_gbps
from podplane_sandbox.kube.launchers import ALONE
from podplane_sandbox.kube.logs import ranks_of
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, quantity

Obj = dict[str, Any]
BUSBW = "sandbox.podplane.io/nccl-busbw"  # GB/s the job's slowest node allows
NETWORK = "sandbox.podplane.io/nccl-network"
RANKS = "sandbox.podplane.io/nccl-ranks"
MARKER = "all_reduce_perf"
EFA, INSTANCE_TYPE = "vpc.amazonaws.com/efa", "node.kubernetes.io/instance-type"
EFA_EFFICIENCY, SOCKET_EFFICIENCY = 0.93, 0.35
LATENCY_US = 60.0
SIZES = [1 << p for p in range(23, 31)]  # 8 MiB .. 1 GiB
LIBFABRIC, SOCKET = "AWS Libfabric", "Socket"


def runs_all_reduce(pod: Obj) -> bool:
    return any(MARKER in " ".join([*(c.get("command") or []), *(c.get("args") or [])])
               for c in (pod.get("spec") or {}).get("containers") or [])


class NcclTests(Controller):
    primary = "pods"

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.rt_key == "pods" and event.type != "DELETED" and runs_all_reduce(event.obj):
            meta = event.obj["metadata"]
            yield (meta.get("namespace", ""), meta["name"])

    def reconcile(self, key: Key) -> float | None:
        pod = self.primary_obj(key)
        if pod is None or BUSBW in (pod["metadata"].get("annotations") or {}):
            return None
        peers = self._peers(pod)
        launch = ranks_of(pod) or ALONE  # what its torchrun reads (launchers.py)
        wanted = launch.nnodes
        if len(peers) < wanted or not all(_node_of(p) for p in peers):
            return None  # not every rank is placed yet: no collective starts
        busbw, network = self._bandwidth(peers)
        ranks = launch.world
        for peer in peers:
            new = clone(peer)
            new["metadata"].setdefault("annotations", {}).update(
                {BUSBW: f"{busbw:.3f}", NETWORK: network, RANKS: str(ranks)})
            self.ctx.update("pods", new)
        return None

    def _peers(self, pod: Obj) -> list[Obj]:
        """The pods of the same job (same controlling owner), this one included."""
        owner = next((r["uid"] for r in pod["metadata"].get("ownerReferences") or []
                      if r.get("controller")), None)
        if owner is None:
            return [pod]
        return [p for p in self.ctx.store.items("pods", pod["metadata"].get("namespace", ""))
                if any(r.get("uid") == owner for r in p["metadata"].get("ownerReferences") or [])
                and not p["metadata"].get("deletionTimestamp")]

    def _bandwidth(self, pods: list[Obj]) -> tuple[float, str]:
        factors = {n.instance_id: n.efa_link_factor for n in self.ctx.node_source.sandbox_nodes()}
        rates, networks = [], set()
        for pod in pods:
            node = self.ctx.store.find("nodes", "", _node_of(pod)) or {}
            itype = ((node.get("metadata") or {}).get("labels") or {}).get(INSTANCE_TYPE, "")
            itype = itype if itype.startswith("ml.") else f"ml.{itype}"
            links = capacity(itype)[3]
            given = _efa_of(pod)
            line = network_gbps(itype) / 8
            if given and links:
                iid = _node_of(pod).removeprefix("hyperpod-")
                rates.append(line * min(given, links) / links * EFA_EFFICIENCY *
                             factors.get(iid, 1.0))
                networks.add(LIBFABRIC)
            else:
                rates.append(line * SOCKET_EFFICIENCY)
                networks.add(SOCKET)
        return min(rates), SOCKET if SOCKET in networks else LIBFABRIC


def _node_of(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _efa_of(pod: Obj) -> int:
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        total += int(quantity({**(res.get("requests") or {}),
                               **(res.get("limits") or {})}.get(EFA, 0)))
    return total


def lines(pod: Obj, started: float) -> list[tuple[float, str]]:
    """What one rank prints: the transport line, and on rank 0 the table (a row every 2 s)."""
    ann = pod["metadata"].get("annotations") or {}
    rank = str((ranks_of(pod) or ALONE).node_rank)
    out = [(started + 1, f"{pod['metadata']['name']}: NCCL INFO Using network {ann[NETWORK]}")]
    if rank != "0":
        return out
    peak, n = float(ann[BUSBW]), max(int(ann.get(RANKS, "2")), 2)
    factor = 2 * (n - 1) / n
    out += [(started + 2, f"# all_reduce_perf (torch.distributed), nranks {n}"),
            (started + 2, "#       size         count      type   redop    root     time   "
                          "algbw   busbw #wrong"),
            (started + 2, "#        (B)    (elements)                               (us)  "
                          "(GB/s)  (GB/s)")]
    total = 0.0
    for i, size in enumerate(SIZES):
        us = LATENCY_US + size * factor / (peak * 1e3)
        alg = size / us / 1e3
        bus = alg * factor
        total += bus
        out.append((started + 4 + 2 * i, f"{size:12d} {size // 4:13d} {'float':>9} {'sum':>7} "
                    f"{-1:7d} {us:8.1f} {alg:7.2f} {bus:7.2f} {'N/A':>6}"))
    out.append((started + 4 + 2 * len(SIZES), f"# Avg bus bandwidth    : {total / len(SIZES):.3f}"))
    return out
