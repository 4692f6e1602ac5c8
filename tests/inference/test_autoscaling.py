"""Endpoint autoscaling end to end on a podplane-created cluster (two one-GPU nodes), read back
with the Kubernetes API: refused while KEDA is off and when a ScaledObject podplane did not
write scales the Deployment (nothing created); with KEDA on, kubectl shows its APIService
Available, its Services and RBAC (the sandbox's HPA reads metrics only through them:
FailedGetExternalMetric otherwise), the endpoint's ScaledObject makes KEDA's HPA; load on
the Service -> replicas up; load gone -> replicas down only after the cooldown (the HPA's
scale-down stabilization window), in virtual minutes; a manual scale is refused; "off"
removes the ScaledObject and its HPA; delete removes the endpoint's ScaledObject and leaves
the foreign one."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.api.routers.endpoints import AutoscalePlanOut, EndpointNoChangeOut
from podplane.domain.inference.shutdown import GRACE_SECONDS
from podplane_sandbox.kube.fake_engine import engines_of
from tests.groups.conftest import finish
from tests.inference.conftest import ENDPOINTS, kubectl_json, owned_objects, settle, store
from tests.jobs.conftest import CLUSTER
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
AUTO = {"min_replicas": 1, "max_replicas": 2, "metric": "running", "target": 4,
        "cooldown_seconds": 120}
FOREIGN = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
           "metadata": {"name": "someone-elses", "namespace": "default"},
           "spec": {"scaleTargetRef": {"name": "taken"}, "triggers": [
               {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50"}}]}}


def replicas(stack: Stack, name: str) -> tuple[int, int]:
    """(Deployment spec.replicas, the HPA's desiredReplicas) as kubectl shows them."""
    settle(stack)
    dep = kubectl_json(stack, "get", "deployment", name, "-n", "default")
    hpa = kubectl_json(stack, "get", "hpa", f"keda-hpa-{name}", "-n", "default")
    return int(dep["spec"]["replicas"]), int(hpa["status"].get("desiredReplicas") or 0)


def load(stack: Stack, name: str, in_flight: int) -> None:
    engines_of(store(stack)).set_load("default", name, in_flight)


def scaled_objects(stack: Stack) -> set[str]:
    settle(stack)
    return {o["metadata"]["name"] for o in
            kubectl_json(stack, "get", "scaledobjects", "-n", "default")["items"]}


async def test_refused_while_keda_is_off(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(ENDPOINTS, json={"name": "auto", "instance_group": group,
                                            "model": MODEL, "autoscaling": AUTO})
        assert r.status_code == 409, r.text
        assert "KEDA" in r.json()["detail"] and "keda" in r.json()["hint"]
        bad = await api.post(ENDPOINTS, json={"name": "auto", "instance_group": group,
                                              "model": MODEL, "autoscaling": {
                                                  **AUTO, "min_replicas": 3}})
        assert bad.status_code == 422 and bad.json()["field"] == "autoscaling.max_replicas"
    assert owned_objects(stack) == []


async def test_load_up_down_after_cooldown(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        on = await api.patch(f"/api/v1/clusters/{CLUSTER}/features/keda",
                             json={"enabled": True})
        assert on.status_code == 202, on.text
        assert (await finish(api, on.json()))["status"] == "succeeded"
        settle(stack, 60)
        _keda_served(stack)
        await _foreign_refused(stack, api, group)

        await _max_beyond_room_warned(stack, api, group)
        r = await api.post(ENDPOINTS, json={"name": "auto", "instance_group": group,
                                            "model": MODEL, "autoscaling": AUTO})
        assert r.status_code == 202, r.text
        assert [m["kind"] for m in r.json()["plan"]["manifests"]] == \
            ["Deployment", "Service", "ScaledObject"]
        assert "warnings" not in r.json()["plan"]   # max 2 fits the two free GPUs
        assert (await finish(api, r.json()))["status"] == "succeeded"
        so = kubectl_json(stack, "get", "scaledobject", "auto", "-n", "default")
        assert so["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "podplane"
        settle(stack, 15)
        assert replicas(stack, "auto") == (1, 1)

        load(stack, "auto", 20)          # 20 running on one pod, target 4 per pod
        settle(stack, 15)
        settle(stack, 15)
        assert replicas(stack, "auto") == (2, 2)   # ceil(20 / 4) = 5, capped at max 2
        settle(stack, 60)
        view = (await api.get(f"{ENDPOINTS}/auto")).json()
        assert view["ready_replicas"] == 2, view
        assert view["autoscaling"]["desired_replicas"] == 2
        assert view["autoscaling"]["current_metric"] == "10"   # 20 over 2 pods
        manual = await api.patch(f"{ENDPOINTS}/auto", json={"replicas": 1})
        assert manual.status_code == 409 and "autoscal" in manual.json()["hint"], manual.text

        load(stack, "auto", 0)
        settle(stack, 60)
        assert replicas(stack, "auto")[0] == 2     # inside the 120 s cooldown
        settle(stack, 45)
        settle(stack, 30)
        assert replicas(stack, "auto") == (1, 1)   # the window passed with no load
        settle(stack, GRACE_SECONDS)  # the removed pod holds its GPU until its grace ends
        await _off_and_delete(stack, api)


def _keda_served(stack: Stack) -> None:
    """What kubectl shows of KEDA's way to the HPA (kedacore/keda config/metrics-server,
    config/manager/service.yaml, config/rbac): the APIService Available through the metrics
    apiserver's Service, the operator's gRPC Service on 9666, the adapter's auth bindings and
    the EndpointSlice list the metrics-api scaler makes."""
    found = kubectl_json(stack, "get", "apiservice", "v1beta1.external.metrics.k8s.io")
    assert found["spec"]["service"]["namespace"] == "keda"
    assert [(c["type"], c["status"]) for c in found["status"]["conditions"]] == \
        [("Available", "True")], found["status"]
    ports = {s["metadata"]["name"]: {p["port"] for p in s["spec"]["ports"]}
             for s in kubectl_json(stack, "get", "services", "-n", "keda")["items"]}
    assert 9666 in ports["keda-operator"] and 443 in ports[found["spec"]["service"]["name"]]
    rbac = kubectl_json(stack, "get", "clusterroles,clusterrolebindings,rolebindings", "-A",
                        "-l", "podplane.io/feature=keda")["items"]
    refs = {(o["kind"], o["metadata"]["name"]): (o.get("roleRef") or {}).get("name")
            for o in rbac}
    assert refs[("ClusterRoleBinding", "keda-system-auth-delegator")] == \
        "system:auth-delegator"
    assert refs[("RoleBinding", "keda-auth-reader")] == \
        "extension-apiserver-authentication-reader"
    (role,) = [o for o in rbac if o["kind"] == "ClusterRole"
               and o["metadata"]["name"] == "keda-operator"]
    assert any("discovery.k8s.io" in r["apiGroups"] and "endpointslices" in r["resources"]
               and "list" in r["verbs"] for r in role["rules"])


async def _max_beyond_room_warned(stack: Stack, api: Any, group: str) -> None:
    """A maximum beyond the free GPUs is planned with a warning, not refused (a dry run)."""
    r = await api.post(ENDPOINTS, params={"dry_run": "true"}, json={
        "name": "auto", "instance_group": group, "model": MODEL,
        "autoscaling": {**AUTO, "max_replicas": 3}})
    assert r.status_code == 200, r.text
    warnings = r.json()["plan"]["warnings"]
    assert len(warnings) == 1 and "3 more replica(s)" in warnings[0], warnings
    assert "2 GPU(s) are free" in warnings[0], warnings
    assert owned_objects(stack) == []


async def _foreign_refused(stack: Stack, api: Any, group: str) -> None:
    kube = stack.sandbox.kube.get(CLUSTER)
    kube.store.create(kube.registry.by_key("keda.sh/scaledobjects"), FOREIGN, "default")
    r = await api.post(ENDPOINTS, json={"name": "taken", "instance_group": group,
                                        "model": MODEL, "autoscaling": AUTO})
    assert r.status_code == 409 and r.json()["code"] == "autoscaler_conflict", r.text
    assert owned_objects(stack) == []


async def _off_and_delete(stack: Stack, api: Any) -> None:
    off = await api.patch(f"{ENDPOINTS}/auto", json={"autoscaling": "off"})
    assert off.status_code == 202, off.text
    assert (await finish(api, off.json()))["status"] == "succeeded"
    assert scaled_objects(stack) == {"someone-elses"}
    assert "keda-hpa-auto" not in {h["metadata"]["name"] for h in kubectl_json(
        stack, "get", "hpa", "-n", "default")["items"]}
    plan = await api.patch(f"{ENDPOINTS}/auto", params={"dry_run": "true"},
                           json={"autoscaling": AUTO})
    assert plan.status_code == 200, plan.text
    shown = EndpointNoChangeOut.model_validate(plan.json()).plan
    assert isinstance(shown, AutoscalePlanOut) and shown.autoscaling.from_ is None
    assert shown.warnings is None   # one pod runs, one GPU is free: a second one fits
    wider = await api.patch(f"{ENDPOINTS}/auto", params={"dry_run": "true"},
                            json={"autoscaling": {**AUTO, "max_replicas": 3}})
    told = EndpointNoChangeOut.model_validate(wider.json()).plan
    assert isinstance(told, AutoscalePlanOut) and told.warnings is not None, wider.text
    assert "2 more replica(s)" in told.warnings[0] and "1 GPU(s) are free" in told.warnings[0]
    assert scaled_objects(stack) == {"someone-elses"}   # a dry run changes nothing
    again = await api.patch(f"{ENDPOINTS}/auto", json={"autoscaling": AUTO})
    assert again.status_code == 202, again.text
    assert (await finish(api, again.json()))["status"] == "succeeded"
    assert scaled_objects(stack) == {"auto", "someone-elses"}
    async with stack.client("admin") as admin:
        gone = await admin.delete(f"{ENDPOINTS}/auto", params={"confirm": True})
        assert gone.status_code == 202, gone.text
        assert (await finish(admin, gone.json()))["status"] == "succeeded"
    assert scaled_objects(stack) == {"someone-elses"}   # the foreign one stays
    assert owned_objects(stack) == []
