"""Task governance as a feature: its EKS add-on, read back with boto3 as EKS shows it.

Enable -> the add-on ACTIVE with podplane's tag; the same request again -> changed: false and
no mutation; disable -> the add-on gone. An add-on of that name installed without podplane is
left alone both ways: never tagged, updated or deleted."""

from __future__ import annotations

import pytest

from podplane.domain.features.catalog import TASK_GOVERNANCE_ADDON
from tests.features.conftest import BASE, addon_of, mutations, same_again_changes_nothing
from tests.groups.conftest import CLUSTER, Cluster, finish

URL = f"{BASE}/task-governance"


async def test_enable_noop_disable(cluster: Cluster) -> None:
    stack = cluster.stack
    async with stack.client("operator") as client:
        on = await client.patch(URL, json={"enabled": True})
        assert on.status_code == 202, on.text
        assert (await finish(client, on.json()))["status"] == "succeeded"
        addon = addon_of(cluster, TASK_GOVERNANCE_ADDON)
        assert addon is not None and addon["status"] == "ACTIVE"
        assert addon["tags"] == {"podplane:feature": "task-governance"}
        view = (await client.get(URL)).json()
        assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == (
            True, True, False)

        await same_again_changes_nothing(client, cluster, URL, {"enabled": True})

        off = await client.patch(URL, json={"enabled": False})
        assert off.status_code == 202, off.text
        assert (await finish(client, off.json()))["status"] == "succeeded"
        assert addon_of(cluster, TASK_GOVERNANCE_ADDON) is None
        assert mutations(stack.ledger(service="eks")).count("eks:DeleteAddon") == 1


async def test_an_addon_podplane_did_not_install_is_left_alone(cluster: Cluster) -> None:
    stack = cluster.stack
    stack.aws("eks").create_addon(clusterName=CLUSTER, addonName=TASK_GOVERNANCE_ADDON)
    async with stack.client("operator") as client:
        plan = await client.post(f"{URL}/plan", json={"enabled": True})
        assert plan.status_code == 200, plan.text
        assert plan.json()["plan"]["actions"] == []
        assert any(TASK_GOVERNANCE_ADDON in a for a in plan.json()["plan"]["left_alone"])
        for enabled in (True, False):
            r = await client.patch(URL, json={"enabled": enabled})
            assert r.status_code in (200, 202), r.text
            if r.status_code == 202:
                assert (await finish(client, r.json()))["status"] == "succeeded"
    addon = addon_of(cluster, TASK_GOVERNANCE_ADDON)
    assert addon is not None and not addon.get("tags")
    eks_changes = mutations(stack.ledger(service="eks"))
    assert "eks:DeleteAddon" not in eks_changes and "eks:TagResource" not in eks_changes


@pytest.mark.parametrize("body", [{"enabled": True, "settings": {"queue": "a"}}])
async def test_it_has_no_settings(cluster: Cluster, body: dict[str, object]) -> None:
    async with cluster.stack.client("operator") as client:
        r = await client.patch(URL, json=body)
    assert r.status_code == 422, r.text
    assert addon_of(cluster, TASK_GOVERNANCE_ADDON) is None
