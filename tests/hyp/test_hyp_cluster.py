"""`hyp list-cluster` and `hyp set-cluster-context` against a podplane-created cluster, as a
new user would run them: the CLI checks STS's caller ARN against the EKS access entries, writes
a kubeconfig with `aws eks update-kubeconfig`, and counts each cluster's Kubernetes nodes."""

from __future__ import annotations

import json

import pytest

from tests.clusters.helpers import BODY, wait_done
from tests.hyp.conftest import Hyp
from tests.sandbox_kube import real_cloud
from tests.stack import Stack

# one created cluster for the module (tests/hyp/conftest.py `podplane_cluster`), on its event loop
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def create_with_podplane(stack: Stack) -> None:
    async with stack.client("operator") as api:
        r = await api.post("/api/v1/clusters", json=BODY)
        assert r.status_code == 202, r.text
        done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)


def second_cluster(stack: Stack) -> None:
    """Another HyperPod cluster, on its own EKS cluster, with one CPU node."""
    real_cloud.create_eks(stack.aws, "other", stack.advance)
    stack.advance(15 * 60)
    real_cloud.create_hyperpod(stack.aws, "other", "other", "ml.m5.xlarge", 1,
                               stack.advance)
    stack.advance(20 * 60)


async def test_set_cluster_context_on_a_podplane_cluster(podplane_cluster: Stack,
                                                         hyp_on: Hyp) -> None:
    stack, hyp = podplane_cluster, hyp_on
    hyp.run("set-cluster-context", "--cluster-name", BODY["name"])
    context = hyp.run("get-cluster-context").stdout
    assert BODY["name"] in context, context
    config = (hyp.home / ".kube" / "config").read_text()
    eks = stack.aws("eks").describe_cluster(name=BODY["name"])["cluster"]
    assert f"server: {eks['endpoint']}" in config


async def test_list_cluster_counts_each_clusters_own_nodes(podplane_cluster: Stack,
                                                           hyp_on: Hyp) -> None:
    stack, hyp = podplane_cluster, hyp_on
    second_cluster(stack)
    stack.sandbox.call(stack.sandbox.kube.settle())
    listed = {c["Cluster"]: c["Instances"] for c in hyp.json("list-cluster", "--output", "json")}
    assert set(listed) == {BODY["name"], "other"}, listed
    totals = {name: {i["InstanceType"]: i["TotalNodes"] for i in instances}
              for name, instances in listed.items()}
    assert totals == {BODY["name"]: {BODY["instance_type"]: BODY["count"]},
                      "other": {"ml.m5.xlarge": 1}}
