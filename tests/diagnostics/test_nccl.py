"""The NCCL all-reduce test on a cluster podplane created (tests/jobs: Kubeflow's training
operator installed, two ml.g5.8xlarge nodes: 1 GPU, 1 EFA, 25 Gbps each). A healthy pair
passes against the type's figure; a node whose EFA link runs slow is named after the pair
round; refusals change nothing; a viewer is refused and audited; the workload never stays
behind (read back with kubectl); the manifest passes the upstream PyTorchJob CRD."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest

from podplane.domain.diagnostics import nccl as rules
from podplane.domain.diagnostics.nccl_workload import Placement, render
from tests.groups.conftest import finish
from tests.jobs.conftest import CLUSTER, cluster, settle, submit  # noqa: F401
from tests.jobs.test_manifests import pytorchjob_schema
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
