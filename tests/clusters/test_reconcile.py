"""Drift is a state and one reconcile puts it back, per unit kind: break a unit out of band
(boto3 as `aws eks delete-addon` / `aws iam detach-role-policy` would, kubectl for manifests),
read the cluster `degraded` naming the unit and what depends on it, dry-run the plan (exactly
the repair), reconcile, read `active`, and find in the ledger only the repair.

One created cluster serves the whole module; every test leaves it active again."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from podplane.domain.dependencies import TRAINING_OPERATOR_POLICY
from podplane.services.clusters.addon_identity import addon_role_name
from podplane.services.clusters.reconcile_watch import DriftWatch
from tests.clusters.helpers import BODY, wait_done
from tests.golden import created_stack
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
NAME = BODY["name"]
RECONCILE = f"/api/v1/clusters/{NAME}/reconcile"
OPERATOR = "amazon-sagemaker-hyperpod-training-operator"
CSI_ASSOCIATION = "pod-identity-association/kube-system/s3-csi-driver-sa"
NVIDIA = ("daemonset/nvidia-device-plugin-daemonset", "kube-system")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    """tests.stack's stack, once per module, on a copy of the run's cluster created through
    REST (tests/golden.py)."""
    async with created_stack(tmp_path_factory, "reconcile") as made:
        yield made


async def status(api: httpx.AsyncClient) -> dict[str, Any]:
    r = await api.get(f"/api/v1/clusters/{NAME}")
    assert r.status_code == 200, r.text
    return dict(r.json())


async def degraded(api: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    found = await status(api)
    assert found["state"] == "degraded", found["drift"]
    assert found["drift"]["since"]
    return {u["unit"]: u for u in found["drift"]["units"]}


async def repair(stack: Stack, api: httpx.AsyncClient,
                 plan: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Dry run (exactly `plan`, nothing changes), reconcile, back to active; the ledger's
    mutations made by the reconcile."""
    before = len(stack.ledger())
    dry = await api.post(RECONCILE, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    assert dry.json()["changed"] is True
    assert [(s["unit"], s["action"]) for s in dry.json()["plan"]] == plan
    assert len(stack.ledger()) == before  # a dry run mutates nothing
    r = await api.post(RECONCILE)
    assert r.status_code == 202, r.text
    assert r.json()["kind"] == "cluster.reconcile"
    done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    assert [s["name"] for s in done["steps"]] == ["observe", "repair", "confirm"]
    after = await status(api)
    assert (after["state"], after["drift"]) == ("active", None)
    return stack.ledger()[before:]


def actions(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["service"], e["action"]) for e in entries]


async def test_nothing_drifted_answers_unchanged_and_mutates_nothing(stack: Stack) -> None:
    before = len(stack.ledger())
    async with stack.client("operator") as api:
        assert (await status(api))["state"] == "active"
        r = await api.post(RECONCILE)
        assert r.status_code == 200, r.text
        assert r.json() == {"changed": False, "plan": [], "left_alone": []}
        dry = await api.post(RECONCILE, params={"dry_run": "true"})
        assert dry.json()["changed"] is False
        ops = (await api.get("/api/v1/operations", params={"kind": "cluster.reconcile"})).json()
    assert ops["items"] == []
    assert stack.ledger()[before:] == []


async def test_deleted_addon_is_degraded_with_its_dependants_then_recreated(
        stack: Stack) -> None:
    stack.aws("eks").delete_addon(clusterName=NAME, addonName="cert-manager")
    stack.advance(10 * 60)
    async with stack.client("operator") as api:
        drifted = await degraded(api)
        assert list(drifted) == ["cert-manager"]
        assert drifted["cert-manager"]["state"] == "missing"
        assert drifted["cert-manager"]["dependants"] == [OPERATOR]
        assert (await status(api))["addons"]["cert-manager"] == "MISSING"
        ledger = await repair(stack, api, [("cert-manager", "create")])
    assert actions(ledger) == [("eks", "CreateAddon")]
    found = stack.aws("eks").describe_addon(clusterName=NAME, addonName="cert-manager")
    assert found["addon"]["status"] == "ACTIVE"


async def test_changed_manifest_object_is_put_back_with_no_aws_call(stack: Stack) -> None:
    ds, ns = NVIDIA
    rendered = stack.kubectl("get", ds, "-n", ns, "-o",
                             "jsonpath={.spec.template.spec.containers[0].image}")
    stack.kubectl("set", "image", ds, "-n", ns, "nvidia-device-plugin-ctr=busybox:1.36")
    async with stack.client("operator") as api:
        drifted = await degraded(api)
        assert list(drifted) == ["nvidia-device-plugin"]
        unit = drifted["nvidia-device-plugin"]
        assert unit["state"] == "changed"
        assert "busybox:1.36" in unit["summary"] and rendered in unit["summary"]
        ledger = await repair(stack, api, [("nvidia-device-plugin", "update")])
    assert ledger == []  # a manifest is put back through Kubernetes only
    assert stack.kubectl("get", ds, "-n", ns, "-o",
                         "jsonpath={.spec.template.spec.containers[0].image}") == rendered


async def test_deleted_manifest_object_is_recreated(stack: Stack) -> None:
    ds, ns = NVIDIA
    stack.kubectl("delete", ds, "-n", ns)
    async with stack.client("operator") as api:
        drifted = await degraded(api)
        assert drifted["nvidia-device-plugin"]["state"] == "missing"
        ledger = await repair(stack, api, [("nvidia-device-plugin", "create")])
    assert ledger == []
    assert "nvidia-device-plugin-daemonset" in stack.kubectl("get", ds, "-n", ns, "-o", "name")


async def test_deleted_pod_identity_association_is_recreated(stack: Stack) -> None:
    eks = stack.aws("eks")
    [csi] = [a for a in eks.list_pod_identity_associations(clusterName=NAME)["associations"]
             if a["serviceAccount"] == "s3-csi-driver-sa"]
    eks.delete_pod_identity_association(clusterName=NAME, associationId=csi["associationId"])
    async with stack.client("operator") as api:
        drifted = await degraded(api)
        assert list(drifted) == [CSI_ASSOCIATION]
        assert drifted[CSI_ASSOCIATION]["dependants"] == [
            "aws-mountpoint-s3-csi-driver", "storage/s3-volume"]
        ledger = await repair(stack, api, [(CSI_ASSOCIATION, "create")])
    assert actions(ledger) == [("eks", "CreatePodIdentityAssociation")]
    again = eks.list_pod_identity_associations(clusterName=NAME, namespace="kube-system")
    assert [a["serviceAccount"] for a in again["associations"]] == ["s3-csi-driver-sa"]


async def test_detached_role_policy_is_attached_again(stack: Stack) -> None:
    role = addon_role_name(NAME, "training", "us-west-2")
    stack.aws("iam").detach_role_policy(RoleName=role, PolicyArn=TRAINING_OPERATOR_POLICY)
    async with stack.client("operator") as api:
        drifted = await degraded(api)
        assert list(drifted) == ["iam-role/training"]
        unit = drifted["iam-role/training"]
        assert unit["state"] == "changed"
        assert unit["fields"] == [{"field": f"attached {TRAINING_OPERATOR_POLICY}",
                                   "desired": True, "observed": False}]
        assert unit["dependants"] == [
            "pod-identity-association/aws-hyperpod/hp-training-operator-controller-manager",
            OPERATOR]
        ledger = await repair(stack, api, [("iam-role/training", "update")])
    assert actions(ledger) == [("iam", "AttachRolePolicy")]
    attached = stack.aws("iam").list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    assert [p["PolicyArn"] for p in attached] == [TRAINING_OPERATOR_POLICY]


async def detected(api: httpx.AsyncClient, unit: str) -> list[dict[str, Any]]:
    events = (await api.get("/api/v1/audit", params={"action": "cluster.drift_detected"}))
    return [e for e in events.json() if unit in json.dumps(e["detail"])]


async def test_drift_is_found_by_the_watch_and_recorded_once(stack: Stack) -> None:
    app = stack.app.state.podplane
    watch = DriftWatch(app, every=300)
    assert await watch.tick() == {NAME: []}
    async with stack.client("admin") as api:
        before = len(await detected(api, "cert-manager"))
        stack.aws("eks").delete_addon(clusterName=NAME, addonName="cert-manager")
        stack.advance(10 * 60)
        assert await watch.tick() is None  # not due: the engine's clock has not moved
        await app.ops_clock.sleep(301)     # the engine's (virtual) clock moves past the period
        assert await watch.tick() == {NAME: ["cert-manager"]}
        for _ in range(3):  # reads see it, and record nothing more
            assert (await status(api))["state"] == "degraded"
        listed = (await api.get("/api/v1/clusters")).json()["managed"]
        assert [c["state"] for c in listed if c["name"] == NAME] == ["degraded"]
        mine = await detected(api, "cert-manager")
        assert len(mine) == before + 1
        assert (mine[0]["principal"], mine[0]["target"]) == ("system", f"cluster/{NAME}")
        assert mine[0]["detail"]["units"][0]["dependants"] == [OPERATOR]
        await repair(stack, api, [("cert-manager", "create")])
        resolved = (await api.get("/api/v1/audit", params={
            "action": "cluster.drift_resolved"})).json()
    assert resolved[0]["target"] == f"cluster/{NAME}"
    async with stack.client("admin") as api:
        listed = (await api.get("/api/v1/clusters")).json()["managed"]
    assert [c["state"] for c in listed if c["name"] == NAME] == ["active"]
