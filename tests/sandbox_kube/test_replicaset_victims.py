"""The sandbox's ReplicaSet removes pods in kube-controller-manager's order
(kubernetes/kubernetes pkg/controller/controller_utils.go, `ActivePodsWithRanks.Less`;
pkg/controller/replicaset/replica_set.go, `getPodsToDelete`), so a scale-in plan that counts on
another order fails here as it would on a real cluster."""

from __future__ import annotations

from typing import Any

import httpx

from podplane_sandbox.kube.controllers.pod_ranks import DELETION_COST, order_for_deletion
from tests.sandbox_kube.conftest import Sandbox
from tests.sandbox_kube.test_controllers import PODS, box, client  # noqa: F401 (fixtures)

NOW = 1_780_000_000.0
SETS = "/apis/apps/v1/namespaces/default/replicasets"
MERGE = "application/merge-patch+json"


def pod(name: str, *, node: str | None = "n1", phase: str = "Running", ready: bool = True,
        cost: int | None = None, created: str = "2026-06-01T00:00:00Z",
        ready_at: str = "2026-06-01T00:01:00Z", restarts: int = 0) -> dict[str, Any]:
    notes = {DELETION_COST: str(cost)} if cost is not None else {}
    return {"metadata": {"name": name, "uid": f"uid-{name}", "annotations": notes,
                         "creationTimestamp": created},
            "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase,
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "lastTransitionTime": ready_at}],
                       "containerStatuses": [{"restartCount": restarts}]}}


def names(pods: list[dict[str, Any]]) -> list[str]:
    return [p["metadata"]["name"] for p in order_for_deletion(pods, NOW)]


def test_a_lower_deletion_cost_is_removed_first() -> None:
    pods = [pod("a", cost=10, node="n1"), pod("b", node="n2"), pod("c", cost=-5, node="n3")]
    assert names(pods) == ["c", "b", "a"]


def test_a_not_ready_pod_goes_before_a_ready_one_whatever_its_cost() -> None:
    pods = [pod("ready-cheap", cost=-1000, node="n1"), pod("not-ready", ready=False, cost=1000,
                                                             node="n2")]
    assert names(pods)[0] == "not-ready"


def test_unscheduled_then_pending_then_running() -> None:
    pods = [pod("running", cost=-9), pod("pending", phase="Pending", ready=False, node="n2"),
            pod("unscheduled", node=None, phase="Pending", ready=False, cost=99)]
    assert names(pods) == ["unscheduled", "pending", "running"]


def test_equal_cost_doubled_up_pods_go_first_then_more_restarts() -> None:
    pods = [pod("alone", node="n2"), pod("pair-1", node="n1"), pod("pair-2", node="n1")]
    assert names(pods)[2] == "alone"
    pods = [pod("calm", node="n1"), pod("crashy", node="n2", restarts=3)]
    assert names(pods) == ["crashy", "calm"]


def test_the_newer_pod_goes_first_when_ages_differ_on_a_log_scale() -> None:
    old = pod("old", node="n1", created="2026-01-01T00:00:00Z", ready_at="2026-01-01T00:01:00Z")
    new = pod("new", node="n2", created="2026-06-01T11:00:00Z", ready_at="2026-06-01T11:01:00Z")
    assert names([old, new]) == ["new", "old"]


def test_the_sandbox_replicaset_removes_the_lowest_cost_pods(  # noqa: F811 (fixtures)
        box: Sandbox, client: httpx.Client) -> None:  # noqa: F811
    """Through the API, as a real cluster is driven: the pod given the lowest cost goes first,
    then the next lowest; the one with the highest cost stays (names play no part)."""
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "warm"},
          "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "warm"}},
                   "template": {"metadata": {"labels": {"app": "warm"}}, "spec": {
                       "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}
    client.post(f"{SETS}", json=rs).raise_for_status()
    box.advance(3)
    pods = sorted(p["metadata"]["name"] for p in client.get(PODS, params={
        "labelSelector": "app=warm"}).json()["items"])
    assert len(pods) == 3
    for name, cost in zip(pods, ("5", "-1", "-7"), strict=True):  # the last name: cheapest
        client.patch(f"{PODS}/{name}", json={"metadata": {"annotations": {DELETION_COST: cost}}},
                     headers={"Content-Type": MERGE}).raise_for_status()
    for replicas, left in ((2, pods[:2]), (1, pods[:1])):
        client.patch(f"{SETS}/warm", json={"spec": {"replicas": replicas}},
                     headers={"Content-Type": MERGE}).raise_for_status()
        box.advance(60)
        alive = sorted(p["metadata"]["name"] for p in client.get(PODS, params={
            "labelSelector": "app=warm"}).json()["items"]
            if not p["metadata"].get("deletionTimestamp"))
        assert alive == left
