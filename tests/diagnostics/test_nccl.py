"""The NCCL all-reduce test on a cluster podplane created (tests/jobs: Kubeflow's training
operator installed, two ml.g5.8xlarge nodes: 1 GPU, 1 EFA, 25 Gbps each). A healthy pair
passes against the type's figure; a node whose EFA link runs slow is named after the pair
round; refusals change nothing; a viewer is refused and audited; the workload never stays
behind (read back with kubectl); the manifest passes the upstream PyTorchJob CRD."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from podplane.domain.diagnostics import nccl as rules
from podplane.domain.diagnostics.nccl_workload import Placement, render
from tests.jobs.conftest import CLUSTER, cluster, settle, submit  # noqa: F401
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
NCCL = f"/api/v1/clusters/{CLUSTER}/diagnostics/nccl"
G5 = rules.expected("ml.g5.8xlarge")
assert G5 is not None


def node_ids(stack: Stack) -> list[str]:
    nodes = stack.aws("sagemaker").list_cluster_nodes(ClusterName=CLUSTER)[
        "ClusterNodeSummaries"]
    return sorted(n["InstanceId"] for n in nodes if n["InstanceStatus"]["Status"] == "Running")


def workloads(stack: Stack) -> tuple[list[str], list[str]]:
    """PyTorchJobs and pods podplane's NCCL tests left, as kubectl lists them."""
    seen = []
    for kind in ("pytorchjobs.kubeflow.org", "pods"):
        found = json.loads(stack.kubectl("get", kind, "-n", "default", "-l",
                                         "podplane.io/diagnosis=nccl", "-o", "json"))
        seen.append(sorted(i["metadata"]["name"] for i in found["items"]))
    return seen[0], seen[1]


async def finish(api: httpx.AsyncClient, op: dict[str, Any], rounds: int = 60
                 ) -> dict[str, Any]:
    """Long-poll the operation to its end (the engine steps virtual time as it sleeps)."""
    for _ in range(rounds):
        op = (await api.get(f"/api/v1/operations/{op['id']}/wait",
                            params={"timeout": 20, "revision": op["revision"]})).json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return op
    raise AssertionError(f"operation {op['id']} did not finish: {op['steps']}")


async def run(api: httpx.AsyncClient, nodes: list[str]) -> dict[str, Any]:
    r = await api.post(NCCL, json={"nodes": nodes})
    assert r.status_code == 202, r.text
    done = await finish(api, r.json())
    assert done["status"] == "succeeded", done
    result = (await api.get(f"{NCCL}/{done['id']}")).json()
    assert result["status"] == "succeeded", result
    return dict(result)


async def test_a_healthy_pair_reaches_the_types_figure_and_leaves_nothing(
        cluster: tuple[Stack, str]) -> None:  # noqa: F811
    stack, _ = cluster
    a, b = node_ids(stack)[:2]
    async with stack.client("operator") as api:
        result = await run(api, [a, f"hyperpod-{b}"])
    verdict, measured = result["verdict"], result["measured"]
    assert verdict["conclusion"] == "healthy" and verdict["findings"] == [], verdict
    assert measured["network"] == "AWS Libfabric" and len(measured["rows"]) == 8
    busbw = measured["busbw"]
    print(f"\nhealthy g5.8xlarge pair: busbw {busbw} GB/s, expected {G5.busbw} GB/s, "
          f"pass at {G5.threshold} GB/s")
    assert G5.threshold <= busbw < G5.busbw
    assert f"{busbw:.2f} GB/s of an expected {G5.busbw:.2f} GB/s" in verdict["notes"][0]
    assert result["pairs"] == [] and result["nodes"] == [a, b]
    assert workloads(stack) == ([], [])


async def test_a_cancelled_test_deletes_its_workload(
        cluster: tuple[Stack, str]) -> None:  # noqa: F811
    stack, _ = cluster
    a, b = node_ids(stack)[:2]
    async with stack.client("operator") as api:
        op = (await api.post(NCCL, json={"nodes": [a, b]})).json()
        for _ in range(200):  # until the job is applied and the step waits on it
            op = (await api.get(f"/api/v1/operations/{op['id']}")).json()
            if op["steps"][0]["phase"] == "running":
                break
            await asyncio.sleep(0.02)  # let the engine run (virtual time moves by its sleeps)
        assert op["steps"][0]["phase"] == "running", op["steps"][0]
        assert (await api.post(f"/api/v1/operations/{op['id']}/cancel")).status_code == 202
        done = await finish(api, op)
    assert done["status"] == "cancelled", done["status"]
    settle(stack, 10)
    assert workloads(stack) == ([], [])


async def test_refusals_change_nothing_and_a_viewer_is_refused_and_audited(
        cluster: tuple[Stack, str]) -> None:  # noqa: F811
    stack, group = cluster
    a, b = node_ids(stack)[:2]
    ledger = len(stack.ledger())
    async with stack.client("operator") as api, stack.client("viewer") as viewer, \
            stack.client("admin") as admin:
        before = (await api.get("/api/v1/operations", params={"kind": "diagnose.nccl"})).json()
        cases = [({"nodes": [a]}, 422, "invalid_input"),
                 ({"nodes": [a, f"hyperpod-{a}"]}, 422, "invalid_input"),
                 ({"nodes": [a, "i-0123456789abcdef0"]}, 422, "invalid_input"),
                 ({"nodes": [a, b], "extra": 1}, 422, "invalid_input")]
        for body, status, code in cases:
            r = await api.post(NCCL, json=body)
            assert (r.status_code, r.json().get("code")) == (status, code), (body, r.text)
        r = await viewer.post(NCCL, json={"nodes": [a, b]})
        assert r.status_code == 403, r.text

        await submit(api, name="holds-gpus", recipe="pytorch-ddp", instance_group=group,
                     replicas=1)
        settle(stack, 5)
        r = await api.post(NCCL, json={"nodes": [a, b]})
        assert (r.status_code, r.json()["code"]) == (409, "nodes_busy"), r.text
        r = await admin.delete(f"/api/v1/clusters/{CLUSTER}/jobs/holds-gpus",
                               params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"

        after = (await api.get("/api/v1/operations", params={"kind": "diagnose.nccl"})).json()
        audit = (await admin.get("/api/v1/audit", params={"action": "diagnose.nccl"})).json()
    assert after["items"] == before["items"]
    assert len(stack.ledger()) == ledger and workloads(stack) == ([], [])
    refused = [(e["principal"], e["result"]) for e in audit]
    assert ("stack-viewer", "error:forbidden") in refused, refused
    assert ("stack-operator", "error:nodes_busy") in refused, refused


async def test_a_slow_efa_link_is_named_after_the_pair_round(
        cluster: tuple[Stack, str]) -> None:  # noqa: F811
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.patch(f"/api/v1/clusters/{CLUSTER}/instance-groups/{group}",
                            json={"count": 3})
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json(), rounds=600))["status"] == "succeeded"
        settle(stack, 60)
        nodes = node_ids(stack)
        assert len(nodes) == 3, nodes
        slow = nodes[1]
        stack.fault(kind="efa_degraded", cluster=CLUSTER, instance_id=slow, factor=0.4)
        result = await run(api, nodes)
    verdict = result["verdict"]
    print(f"\nslow link on {slow}: busbw {result['measured']['busbw']} GB/s; pairs "
          f"{[(p['nodes'], p['busbw']) for p in result['pairs']]}")
    assert verdict["status"] == "fail", verdict
    assert f"slow link is on node {slow}" in verdict["conclusion"], verdict["conclusion"]
    (finding,) = verdict["findings"]
    assert finding["check"] == "bus_bandwidth"
    assert result["measured"]["busbw"] < G5.threshold
    pairs = {tuple(p["nodes"]): p["busbw"] for p in result["pairs"]}
    assert len(pairs) == 3
    assert all((bw < G5.threshold) == (slow in pair) for pair, bw in pairs.items()), pairs
    assert any(f"pair {slow}" in e["detail"] or f"+ {slow}" in e["detail"]
               for e in finding["evidence"])
    assert verdict["next"] == {"tool": "diagnose_node", "arguments": {
        "cluster": CLUSTER, "node": slow}, "cost": verdict["next"]["cost"], "mutates": False}
    assert workloads(stack) == ([], [])



async def test_asking_more_efa_than_a_node_has_stays_pending(
        cluster: tuple[Stack, str], tmp_path: Path) -> None:  # noqa: F811
    """What the sandbox refuses as Kubernetes would: the scheduler binds no pod that asks for
    more `vpc.amazonaws.com/efa` than the node's device plugin offers (g5.8xlarge: 1)."""
    stack, _ = cluster
    a, b = node_ids(stack)[:2]
    job = render("nccl-greedy-all", "op-greedy", Placement((f"hyperpod-{a}", f"hyperpod-{b}"),
                                                             1, 2))
    path = tmp_path / "greedy.json"
    path.write_text(json.dumps(job))
    stack.kubectl("apply", "-f", str(path))
    settle(stack, 30)
    pods = json.loads(stack.kubectl("get", "pods", "-n", "default", "-l",
                                    "podplane.io/operation=op-greedy", "-o", "json"))["items"]
    assert len(pods) == 2
    for pod in pods:
        assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
        (cond,) = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert "Insufficient vpc.amazonaws.com/efa" in cond["message"], cond
    stack.kubectl("delete", "-f", str(path), "--wait=false")
    settle(stack, 30)
    assert workloads(stack) == ([], [])
