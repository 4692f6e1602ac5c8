"""KubeRay and KEDA as features on a sandbox cluster: enable -> observed = desired; the same
request again -> changed: false and no mutation; drift made out of band -> drifted with what
differs -> one reconcile puts it back; disable -> exactly what it made is gone, and an object
of the same kind that podplane did not make survives."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from podplane.domain.errors import InvalidInput
from podplane.services.cloud_access import cloud_of
from tests.features.conftest import BASE
from tests.groups.conftest import Cluster, finish

FOREIGN_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"kind": "Widget", "plural": "widgets", "singular": "widget",
                       "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True}}}]}}


def kube_json(cluster: Cluster, *args: str) -> Any:
    cluster.stack.sandbox.call(cluster.stack.sandbox.kube.settle())
    return json.loads(cluster.stack.kubectl(*args, "-o", "json"))


def names(cluster: Cluster, kind: str, *extra: str) -> set[str]:
    return {o["metadata"]["name"] for o in kube_json(cluster, "get", kind, *extra)["items"]}


def owned_versions(cluster: Cluster, name: str) -> dict[str, str]:
    """resourceVersion of every object labelled as the feature's (a write changes it)."""
    found = kube_json(cluster, "get", "crd,namespace,serviceaccount,clusterrole,"
                      "clusterrolebinding,role,rolebinding,deployment,service,apiservice", "-A",
                      "-l", f"podplane.io/feature={name}")
    return {f"{o['kind']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for o in found["items"]}


async def feature(client: httpx.AsyncClient, name: str) -> dict[str, Any]:
    r = await client.get(f"{BASE}/{name}")
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_kuberay_enable_noop_drift_reconcile_disable(cluster: Cluster) -> None:
    stack = cluster.stack
    async with stack.client("operator") as client:
        before = await feature(client, "kuberay")
        assert (before["desired_enabled"], before["observed_enabled"]) == (False, False)
        assert before["drifted"] is False

        plan = await client.post(f"{BASE}/kuberay/plan", json={"enabled": True})
        assert plan.status_code == 200, plan.text
        actions = plan.json()["plan"]["actions"]
        assert [a["verb"] for a in actions] == ["create"] * 9
        assert actions[0]["key"].endswith("rayclusters.ray.io")
        assert actions[-1]["key"].endswith("ray-system/kuberay-operator")
        assert (await feature(client, "kuberay"))["desired_enabled"] is False  # plan only

        r = await client.patch(f"{BASE}/kuberay", json={"enabled": True})
        assert r.status_code == 202, r.text
        done = await finish(client, r.json())
        assert done["status"] == "succeeded", done
        assert [s["name"] for s in done["steps"]] == ["apply", "verify"]
        crds = names(cluster, "crd")
        assert {"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io",
                "raycronjobs.ray.io"} <= crds
        deploy = kube_json(cluster, "get", "deployment", "kuberay-operator", "-n", "ray-system")
        assert deploy["status"]["availableReplicas"] == 1
        assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == \
            "quay.io/kuberay/operator:v1.7.0"
        now = await feature(client, "kuberay")
        assert (now["desired_enabled"], now["observed_enabled"], now["drifted"]) == \
            (True, True, False)

        # the same request again: nothing to do, no operation, no mutation anywhere (the
        # AWS ledger, and no object of the feature written: same resourceVersions)
        ledger = len(stack.ledger())
        versions = owned_versions(cluster, "kuberay")
        assert len(versions) == 9
        again = await client.patch(f"{BASE}/kuberay", json={"enabled": True})
        assert again.status_code == 200 and again.json()["changed"] is False
        assert len(stack.ledger()) == ledger
        assert owned_versions(cluster, "kuberay") == versions

        # drift out of band: the operator's Deployment deleted, its ClusterRole loses a rule
        stack.kubectl("delete", "deployment", "kuberay-operator", "-n", "ray-system")
        stack.kubectl("patch", "clusterrole", "kuberay-operator", "--type=json",
                      "-p", '[{"op": "remove", "path": "/rules/0"}]')
        drifted = await feature(client, "kuberay")
        assert drifted["drifted"] is True
        assert any("Deployment ray-system/kuberay-operator is missing" in d
                   for d in drifted["drift"]), drifted["drift"]
        assert any("ClusterRole kuberay-operator" in d and "rules.0" in d
                   for d in drifted["drift"]), drifted["drift"]
        fix = await client.patch(f"{BASE}/kuberay", json={"enabled": True})
        assert fix.status_code == 202, fix.text
        assert [a["verb"] for a in fix.json()["plan"]["actions"]] == ["update", "create"]
        assert (await finish(client, fix.json()))["status"] == "succeeded"
        assert (await feature(client, "kuberay"))["drifted"] is False

        # disable: only what podplane made goes; a CRD someone else made stays
        kube = await _kube(cluster)
        await kube.apply(FOREIGN_CRD, force=True)
        crds_before = names(cluster, "crd")
        off = await client.patch(f"{BASE}/kuberay", json={"enabled": False})
        assert off.status_code == 202, off.text
        verbs = [a["verb"] for a in off.json()["plan"]["actions"]]
        assert verbs == ["delete"] * 9
        assert (await finish(client, off.json()))["status"] == "succeeded"
        crds_after = names(cluster, "crd")
        assert crds_before - crds_after == {"rayclusters.ray.io", "rayjobs.ray.io",
                                            "rayservices.ray.io", "raycronjobs.ray.io"}
        assert "widgets.example.com" in crds_after
        assert "ray-system" not in names(cluster, "namespace")
        gone = await feature(client, "kuberay")
        assert (gone["desired_enabled"], gone["observed_enabled"], gone["drifted"]) == \
            (False, False, False)
        same = await client.patch(f"{BASE}/kuberay", json={"enabled": False})
        assert same.status_code == 200 and same.json()["changed"] is False


async def _kube(cluster: Cluster) -> Any:
    return await cloud_of(cluster.stack.app.state.podplane).kube_for(cluster.name)


SCALED_OBJECT = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                 "metadata": {"name": "router", "namespace": "default"},
                 "spec": {"scaleTargetRef": {"name": "router"}, "triggers": [
                     {"type": "cpu", "metricType": "Utilization",
                      "metadata": {"value": "60"}}]}}
FOREIGN_ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "keda-reader"},
                "rules": [{"apiGroups": ["keda.sh"], "resources": ["*"], "verbs": ["get"]}]}


async def test_keda_enable_noop_disable(cluster: Cluster) -> None:
    stack = cluster.stack
    kube = await _kube(cluster)
    await kube.apply(FOREIGN_ROLE, force=True)
    async with stack.client("operator") as client:
        r = await client.patch(f"{BASE}/keda", json={"enabled": True})
        assert r.status_code == 202, r.text
        assert (await finish(client, r.json()))["status"] == "succeeded"
        deployments = kube_json(cluster, "get", "deployment", "-n", "keda")["items"]
        assert {d["metadata"]["name"]: d["status"].get("availableReplicas") for d in
                deployments} == {"keda-operator": 1, "keda-operator-metrics-apiserver": 1}
        # the CRD is served and keeps upstream's required fields
        await kube.apply(SCALED_OBJECT, force=True)
        bad = {**SCALED_OBJECT, "metadata": {"name": "bad", "namespace": "default"},
               "spec": {"scaleTargetRef": {"name": "router"}}}
        with pytest.raises(InvalidInput, match="triggers"):
            await kube.apply(bad, force=True)
        roles_before = names(cluster, "clusterrole")

        count, versions = len(stack.ledger()), owned_versions(cluster, "keda")
        # CRDs, namespace, SA, RBAC, both Deployments, both Services and the APIService
        # (kedacore/keda config/{rbac,manager,metrics-server})
        assert len(versions) == 19, sorted(versions)
        same = await client.patch(f"{BASE}/keda", json={"enabled": True})
        assert same.status_code == 200 and same.json()["changed"] is False
        assert len(stack.ledger()) == count
        assert owned_versions(cluster, "keda") == versions

        off = await client.patch(f"{BASE}/keda", json={"enabled": False})
        assert off.status_code == 202
        assert (await finish(client, off.json()))["status"] == "succeeded"
        assert roles_before - names(cluster, "clusterrole") == {
            "keda-operator", "keda-external-metrics-reader"}
        assert "v1beta1.external.metrics.k8s.io" not in names(cluster, "apiservice")
        assert "keda-reader" in names(cluster, "clusterrole")
        assert not {n for n in names(cluster, "crd") if n.endswith(".keda.sh")}
