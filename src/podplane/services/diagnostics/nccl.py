"""The NCCL all-reduce test across chosen nodes (docs/diagnostics.md, "NCCL test").

Unlike the other diagnoses it runs a workload on the cluster, so it is a mutation: operator
role, an operation (`diagnose.nccl`, services/diagnostics/nccl_steps.py), an audit line. A
request is checked against HyperPod and Kubernetes before anything starts, and a refused
request changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.domain.diagnostics import nccl as rules
from podplane.domain.diagnostics import nccl_workload as wl
from podplane.domain.diagnostics.nccl_workload import EFA, GPU
from podplane.domain.effects import Effect
from podplane.domain.errors import Conflict, InvalidInput, NotFound
from podplane.domain.jobs.kinds import HEALTH_LABEL
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.diagnostics.nccl_steps import KIND
from podplane.services.mutation import Outcome, key_used, replay, start
from podplane.services.nodes.service import node_id
from podplane.services.operations import engine_of
from podplane.services.registry import service

Shape = dict[str, Any]


class NodesBusy(Conflict):
    code = "nodes_busy"


class NodeNotSchedulable(Conflict):
    code = "node_not_schedulable"


class OperatorMissing(Conflict):
    code = "training_operator_missing"


def target(cluster: str) -> str:
    return f"cluster/{cluster}/nccl"  # one test at a time per cluster (it takes whole nodes)


@service(Effect.MUTATE, "diagnose.nccl",
         target=lambda cluster, *_a, **_k: target(cluster))
async def run_nccl(ctx: Ctx, cluster: str, request: rules.NcclRequest, *,
                   idempotency_key: str | None = None) -> Outcome:
    ids = [node_id(n) for n in request.nodes]
    if len(set(ids)) != len(ids):
        raise InvalidInput("A node is named twice.", field="nodes")
    ref, kube = await scope.kube_of(ctx, cluster)
    params: Shape = {"cluster_ref": ref.params(), "nodes": ids}
    if await key_used(ctx, idempotency_key):  # a replay returns its operation
        return await replay(ctx, KIND, target(cluster), params, idempotency_key)
    try:  # the workload is a PyTorchJob: Kubeflow's training operator must be there
        await kube.list(wl.API_VERSION, wl.KIND, namespace=wl.NAMESPACE)
    except NotFound:
        raise OperatorMissing("The cluster has no PyTorchJob kind (Kubeflow's training "
                              "operator).", hint="Install the cluster's dependencies "
                              "(cluster_reconcile).") from None
    chosen = await _chosen(ctx, ref, kube, ids)
    want = rules.expected(chosen.instance_type)
    params.update(instance_type=chosen.instance_type, gpus=chosen.gpus, efa=chosen.efa,
                  efa_allocatable=chosen.efa_by_node)
    plan = {"nodes": ids, "instance_type": chosen.instance_type, "gpus_per_node": chosen.gpus,
            "efa_per_node": chosen.efa,
            "expected_busbw": want.busbw if want else None,
            "pass_busbw": want.threshold if want else None,
            "workload": "PyTorchJob all_reduce_perf, deleted when the test ends",
            "pairs": len(rules.ring_pairs(ids))}
    return await start(ctx, KIND, target(cluster), params, idempotency_key, plan)


@dataclass(frozen=True)
class Chosen:
    instance_type: str
    gpus: int
    efa: int
    efa_by_node: dict[str, int]


async def _chosen(ctx: Ctx, ref: scope.ClusterRef, kube: Any, ids: list[str]) -> Chosen:
    """The nodes as HyperPod and Kubernetes see them, refused unless all are Running, of one
    GPU type, schedulable and idle."""
    summaries = {n["InstanceId"]: n for n in
                 await cloud_of(ctx.app).aws.hyperpod.list_cluster_nodes(ref.hyperpod)}
    unknown = [i for i in ids if i not in summaries]
    if unknown:
        raise InvalidInput(f"Cluster {ref.name!r} has no node {', '.join(unknown)}.",
                           field="nodes", hint="List nodes with node_list.")
    types = sorted({summaries[i]["InstanceType"] for i in ids})
    if len(types) > 1:
        raise InvalidInput(f"The nodes are of different types ({', '.join(types)}); an "
                           "all-reduce compares with one type's figure.", field="nodes")
    nodes = {i: await kube.get("v1", "Node", f"hyperpod-{i}") for i in ids}
    gpus = {i: _alloc(n, GPU) for i, n in nodes.items()}
    if not all(gpus.values()):
        bare = ", ".join(i for i, g in gpus.items() if not g)
        raise InvalidInput(f"No NVIDIA GPU on {bare} ({types[0]}): NCCL needs GPUs.",
                           field="nodes", hint="Choose nodes of a GPU instance group.")
    for i, node in nodes.items():
        _refuse_unschedulable(i, node, summaries[i])
    await _refuse_busy(kube, {f"hyperpod-{i}" for i in ids})
    efa = {i: _alloc(n, EFA) for i, n in nodes.items()}
    return Chosen(types[0], min(gpus.values()), min(efa.values()), efa)


def _alloc(node: Shape | None, resource: str) -> int:
    return int(str(((node or {}).get("status") or {}).get("allocatable", {}).get(resource, 0)))


def _refuse_unschedulable(iid: str, node: Shape | None, summary: Shape) -> None:
    status = (summary.get("InstanceStatus") or {}).get("Status")
    labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    health = labels.get(HEALTH_LABEL)
    if status != "Running" or node is None or health != "Schedulable" or \
            (node.get("spec") or {}).get("unschedulable"):
        raise NodeNotSchedulable(f"Node {iid} takes no workload now (HyperPod {status}, "
                                 f"health {health}).", hint=f"diagnose_node {iid} first.")


async def _refuse_busy(kube: Any, names: set[str]) -> None:
    """Each test pod takes every GPU of its node: a GPU in use would leave it Pending. A pod
    already terminating frees its GPUs within its grace period: the test waits for it."""
    busy = sorted({p["spec"]["nodeName"] for p in await kube.list("v1", "Pod")
                   if (p.get("spec") or {}).get("nodeName") in names
                   and not p["metadata"].get("deletionTimestamp")
                   and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
                   and any(_wants_gpu(c) for c in p["spec"].get("containers") or [])})
    if busy:
        raise NodesBusy(f"GPUs are in use on {', '.join(busy)}.",
                        hint="Wait for their jobs to end, or choose idle nodes.")


def _wants_gpu(container: Shape) -> bool:
    res = container.get("resources") or {}
    return bool(int(str({**(res.get("requests") or {}), **(res.get("limits") or {})}
                        .get(GPU, 0))))


@service(Effect.READ, "diagnose.nccl.result")
async def nccl_result(ctx: Ctx, cluster: str, op_id: str) -> Shape:
    """The test's verdict and figures, read from its operation."""
    op = await engine_of(ctx.app).read(op_id, history=False)
    if op.kind != KIND or op.target != target(cluster):
        raise NotFound(f"Operation {op_id!r} is not an NCCL test on {cluster!r}.")
    result = op.result or {}
    return {"operation_id": op.id, "status": op.status, "nodes": result.get("nodes") or [],
            "verdict": result.get("verdict"), "measured": result.get("measured"),
            "pairs": result.get("pairs") or []}
