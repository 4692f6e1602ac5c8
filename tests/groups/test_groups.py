"""Instance groups in the sandbox: add spot, scale up and down, delete; immutables; EFA-only."""

from __future__ import annotations

from typing import Any

from tests.groups.conftest import (
    FIRST_GROUP,
    LIFECYCLE,
    ROLE,
    Cluster,
    finish,
    labels_of,
    ready,
)

BASE = "/api/v1/clusters/gpu/instance-groups"


async def test_spot_group_add_scale_and_delete_are_tracked_to_completion(
    cluster: Cluster,
) -> None:
    stack = cluster.stack
    first_before = cluster.describe()["InstanceGroups"][0]
    async with stack.client("operator") as op_client, stack.client("admin") as admin:
        r = await op_client.post(BASE, json={"name": "spot-a", "instance_type": "ml.g5.8xlarge",
                                             "count": 2, "availability_zone": "us-west-2a",
                                             "capacity_type": "spot"})
        assert r.status_code == 202, r.text
        added = r.json()
        assert added["kind"] == "instance_group.add"
        assert added["status_tool"] == "operation_wait"
        assert added["plan"]["subnet"]["action"] == "reuse"
        assert added["plan"]["subnet"]["subnet_id"] == cluster.compute_subnet
        done = await finish(op_client, added)
        assert done["status"] == "succeeded", done
        assert [s["name"] for s in done["steps"]] == ["place", "update-cluster", "wait-nodes",
                                                      "kubernetes"]

        nodes = await cluster.kube_nodes(instance_group_name="spot-a")
        assert len(nodes) == 2 and all(ready(n) for n in nodes)
        assert {labels_of(n)["sagemaker.amazonaws.com/capacity-type"] for n in nodes} == {"spot"}

        # One UpdateCluster: the new group added, the first resubmitted exactly as it was.
        (update,) = cluster.updates()
        assert (update["params"]["added"], update["params"]["scaled"]) == (["spot-a"],
                                                                           [FIRST_GROUP])
        groups = {g["InstanceGroupName"]: g for g in cluster.describe()["InstanceGroups"]}
        assert _settings(groups[FIRST_GROUP]) == _settings(first_before)
        spot = groups["spot-a"]
        assert spot["CapacityRequirements"] == {"Spot": {}}
        assert spot["LifeCycleConfig"] == LIFECYCLE and spot["ExecutionRole"] == ROLE

        for count in (4, 1):
            r = await op_client.patch(f"{BASE}/spot-a", json={"count": count})
            if count == 1:  # a scale-down terminates nodes: a destroy (admin + confirm)
                assert r.status_code == 403 and r.json()["code"] == "forbidden", r.text
                r = await admin.patch(f"{BASE}/spot-a", json={"count": count})
                assert r.status_code == 428 and r.json()["code"] == "confirmation_required"
                r = await admin.patch(f"{BASE}/spot-a", json={"count": count, "confirm": True})
            assert r.status_code == 202, r.text
            assert (await finish(op_client, r.json()))["status"] == "succeeded"
            assert len(cluster.nodes_of("spot-a")) == count
            assert len(await cluster.kube_nodes(instance_group_name="spot-a")) == count
            group = (await op_client.get(f"{BASE}/spot-a")).json()
            assert (group["target_count"], group["current_count"]) == (count, count)
            assert group["capacity_type"] == "spot"

        same = await op_client.patch(f"{BASE}/spot-a", json={"count": 1})
        assert same.status_code == 200 and same.json()["changed"] is False

        assert (await op_client.delete(f"{BASE}/spot-a")).status_code == 403  # admin only
        unconfirmed = await admin.delete(f"{BASE}/spot-a")
        assert unconfirmed.status_code == 428
        assert unconfirmed.json()["code"] == "confirmation_required"
        r = await admin.delete(f"{BASE}/spot-a", params={"confirm": "true"})
        assert r.status_code == 202, r.text
        assert (await finish(admin, r.json()))["status"] == "succeeded"
        assert cluster.nodes_of("spot-a") == []
        assert await cluster.kube_nodes(instance_group_name="spot-a") == []
        names = [g["name"] for g in (await admin.get(BASE)).json()]
        assert names == [FIRST_GROUP]
        # UpdateClusters: add, scale up, scale down, delete — nothing else.
        assert len(cluster.updates()) == 4


async def test_changing_capacity_type_or_efa_mode_is_refused_before_any_aws_call(
    cluster: Cluster,
) -> None:
    async with cluster.stack.client("operator") as client:
        r = await client.patch(f"{BASE}/{FIRST_GROUP}", json={"count": 3,
                                                               "capacity_type": "spot"})
        assert r.status_code == 409, r.text
        assert r.json()["field"] == "capacity_type"
        assert "immutable" in r.json()["detail"]
        r = await client.patch(f"{BASE}/{FIRST_GROUP}", json={"efa_only": True})
        assert r.status_code == 409, r.text
        assert r.json()["field"] == "efa_only"
        unchanged = await client.patch(f"{BASE}/{FIRST_GROUP}",
                                       json={"capacity_type": "on-demand", "efa_only": False})
        assert unchanged.status_code == 200 and unchanged.json()["changed"] is False
    assert cluster.updates() == []


async def test_efa_only_needs_a_type_with_several_efa_cards(cluster: Cluster) -> None:
    async with cluster.stack.client("operator") as client:
        r = await client.post(BASE, json={"name": "efa", "instance_type": "ml.g5.8xlarge",
                                          "count": 1, "efa_only": True})
        assert r.status_code == 422, r.text
        problem = r.json()
        assert problem["field"] == "efa_only"
        assert "ml.p5.48xlarge" in problem["allowed"] and "ml.g5.8xlarge" not in problem[
            "allowed"]
        assert "ml.p5.48xlarge" in problem["hint"]
        ok = await client.post(BASE, params={"dry_run": "true"},
                               json={"name": "efa", "instance_type": "ml.p5.48xlarge",
                                     "count": 1, "efa_only": True})
        assert ok.status_code == 200, ok.text
        spec = ok.json()["plan"]["instance_group"]
        assert spec["NetworkInterface"] == {"InterfaceType": "efa-only"}
        assert spec["ThreadsPerCore"] == 2
    assert cluster.updates() == []


def _settings(group: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in group.items()
            if k not in ("Status", "CurrentCount", "InstanceTypeDetails")}


async def test_quota_scale_to_zero_last_group_and_busy_target(cluster: Cluster) -> None:
    async with cluster.stack.client("admin") as client:
        over = await client.patch(f"{BASE}/{FIRST_GROUP}", json={"count": 40})
        assert over.status_code == 422 and over.json()["code"] == "quota_exceeded"
        assert over.json()["quota"] == 32
        too_many = await client.post(BASE, json={"name": "big", "instance_type": "ml.g5.8xlarge",
                                                 "count": 32})
        assert too_many.status_code == 422 and too_many.json()["code"] == "quota_exceeded"

        last = await client.delete(f"{BASE}/{FIRST_GROUP}", params={"confirm": "true"})
        assert last.status_code == 409 and "last instance group" in last.json()["detail"]

        first = await client.patch(f"{BASE}/{FIRST_GROUP}", json={"count": 0},
                                   params={"confirm": "true"})  # to zero: a destroy
        assert first.status_code == 202, first.text
        busy = await client.post(BASE, json={"name": "later", "instance_type": "ml.m5.xlarge",
                                              "count": 1})
        assert busy.status_code == 409 and busy.json()["code"] == "target_busy"
        assert busy.json()["operation_id"] == first.json()["id"]
        assert (await finish(client, first.json()))["status"] == "succeeded"
        group = (await client.get(f"{BASE}/{FIRST_GROUP}")).json()
    assert (group["target_count"], group["current_count"]) == (0, 0)
    assert cluster.nodes_of(FIRST_GROUP) == []
    assert await cluster.kube_nodes(instance_group_name=FIRST_GROUP) == []
    assert len(cluster.updates()) == 1
