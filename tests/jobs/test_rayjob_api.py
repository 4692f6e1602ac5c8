"""The VERL recipe as a KubeRay RayJob over REST and MCP on a podplane-created cluster: refused
(409 naming the feature) while the kuberay feature is off; once it is on, what Kubernetes holds
is what KubeRay makes of podplane's RayJob (read back with kubectl): a RayCluster `<job>-xxxxx`,
a head and GPU workers on the chosen group's healthy nodes, a submitter Job whose pod carries
the driver's log; the job runs to Succeeded and the cluster goes after the TTL; a failing
entrypoint fails it with Ray's message; cancel suspends it (cluster and submitter gone)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podplane.domain.jobs.ray import TTL_SECONDS
from tests.groups.conftest import finish
from tests.jobs.conftest import CLUSTER, JOBS, job, settle, store
from tests.jobs.test_mcp_recipes import Counted, _check_outputs, agent_submits
from tests.mcp.conftest import mcp_client
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
RAYJOBS = "ray.io/rayjobs"


def kubectl_json(stack: Stack, *args: str) -> Any:
    settle(stack)
    return json.loads(stack.kubectl(*args, "-o", "json"))


def rayjobs(stack: Stack) -> list[str]:
    return sorted(j["metadata"]["name"] for j in store(stack).items(RAYJOBS, "default")) \
        if stack.sandbox.kube.get(CLUSTER).store.registry.by_key(RAYJOBS) else []


async def until(stack: Stack, api: Any, name: str, *statuses: str,
                step: float = 10, limit: int = 60) -> dict[str, Any]:
    for _ in range(limit):
        view = await job(api, name)
        if view["status"] in statuses:
            return view
        settle(stack, step)
    raise AssertionError(f"{name} never reached {statuses}: {view}")


async def test_a_rayjob_is_refused_while_kuberay_is_off(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(JOBS, json={"name": "early-rl", "recipe": "verl-grpo",
                                       "instance_group": group})
        assert r.status_code == 409, r.text
        problem = r.json()
        assert problem["code"] == "feature_required"
        assert "kuberay" in problem["detail"] and "features/kuberay" in problem["hint"]
        r = await api.post(JOBS, json={"name": "early-rl", "recipe": "verl-grpo",
                                       "instance_group": group,
                                       "params": {"train_files": "/tmp/x.parquet"}})
        assert r.status_code == 422 and r.json()["field"] == "params.train_files", r.text
    assert rayjobs(stack) == []
    async with stack.client("admin") as admin:
        r = await admin.patch(f"/api/v1/clusters/{CLUSTER}/features/kuberay",
                              json={"enabled": True})
        assert r.status_code == 202, r.text
        assert (await finish(admin, r.json()))["status"] == "succeeded"


async def test_verl_from_mcp_runs_as_kuberay_makes_it_then_the_cluster_goes(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        agent = Counted(client)
        view = await agent_submits(agent, "verl-grpo", group, "grpo1")
        assert agent.calls <= 5 and view["kind"] == "RayJob"
    settle(stack, 5)
    rj = kubectl_json(stack, "get", "rayjob", "grpo1")
    assert rj["spec"]["rayClusterSpec"]["rayVersion"] == "2.56.0"
    cluster_name = rj["status"]["rayClusterName"]
    assert cluster_name.startswith("grpo1-") and len(cluster_name) == len("grpo1-") + 5
    rc = kubectl_json(stack, "get", "raycluster", cluster_name)
    assert rc["metadata"]["labels"]["ray.io/originated-from-cr-name"] == "grpo1"
    ray_pods = kubectl_json(stack, "get", "pods", "-l", f"ray.io/cluster={cluster_name}")["items"]
    by_type = {(p["metadata"]["labels"]["ray.io/node-type"], p["metadata"]["labels"][
        "ray.io/group"]) for p in ray_pods}
    assert by_type == {("head", "headgroup"), ("worker", "gpu-workers")}
    nodes = {p["spec"].get("nodeName") for p in ray_pods}
    assert None not in nodes
    async with stack.client("viewer") as api:
        view = await until(stack, api, "grpo1", "Running", "Succeeded", step=2)
        roles = {p["role"]: p for p in view["pods"]}
        assert set(roles) == {"head", "worker", "submitter"}, view["pods"]
        assert roles["worker"]["node"] in nodes and roles["worker"]["node_verdict"]["schedulable"]
        assert view["ray"]["ray_cluster"] == cluster_name
        assert view["ray"]["driver_pod"] == roles["submitter"]["name"]
        row = next(j for j in (await api.get(JOBS)).json() if j["name"] == "grpo1")
        assert (row["kind"], row["recipe"], row["pods"], row["replicas"]) == (
            "RayJob", "verl-grpo", 3, 1)
        submitter = kubectl_json(stack, "get", "job", "grpo1")
        assert submitter["metadata"]["ownerReferences"][0]["kind"] == "RayJob"
        done = await until(stack, api, "grpo1", "Succeeded", "Failed")
        assert done["status"] == "Succeeded", done
        assert (done["ray"]["job_deployment_status"], done["ray"]["job_status"]) == (
            "Complete", "SUCCEEDED")
        assert done["completed_at"] and done["ray"]["message"] == "Job finished successfully."
        logs = (await api.get(f"{JOBS}/grpo1/logs", params={"limit": 1000})).json()
        driver = [line["line"] for line in logs["lines"]
                  if line["pod"] == done["ray"]["driver_pod"]]
        assert any(line.startswith("step:1 - actor/pg_loss:") for line in driver), driver
        assert any("succeeded" in line for line in driver)
        _check_outputs(stack, done, "grpo1")  # the driver saved through the head's mount
        assert {f["key"] for f in done["files"]} >= {"outputs/grpo1/config.json"}
        events = {e["reason"] for e in (await api.get(f"{JOBS}/grpo1/events")).json()}
        assert {"CreatedRayCluster", "CreatedRayJobSubmitter"} <= events, events
        settle(stack, TTL_SECONDS - 30)
        assert stack.kubectl("get", "raycluster", cluster_name, "-o", "name").strip()
        settle(stack, 60)
        gone = kubectl_json(stack, "get", "rayclusters")["items"]
        assert cluster_name not in {c["metadata"]["name"] for c in gone}
        settle(stack, 5)
        after = await job(api, "grpo1")
        assert {p["role"] for p in after["pods"]} == {"submitter"}  # driver logs stay
        assert after["status"] == "Succeeded"


async def test_a_failing_entrypoint_fails_with_rays_message(cluster: tuple[Stack, str],
                                                            tmp_path: Path) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(JOBS, params={"dry_run": "true"}, json={
            "name": "badrl", "recipe": "verl-grpo", "instance_group": group,
            "params": {"adv_estimator": "gae"}})
        assert r.status_code == 200, r.text
        plan = r.json()["plan"]
        assert plan["gpus_requested"] == plan["replicas"] * plan["gpus_per_replica"]
        assert plan["gpus_requested"] <= plan["gpus_free"]
        r = await api.post(JOBS, json={"name": "bigrl", "recipe": "verl-grpo",
                                       "instance_group": group, "replicas": 3})
        assert r.status_code == 409 and r.json()["code"] == "insufficient_gpus", r.text
        manifest = plan["manifest"]
        manifest["metadata"]["annotations"].update({  # the entrypoint exits 1 after 10 s
            "sandbox.podplane.io/exit-code": "1", "sandbox.podplane.io/duration-seconds": "10"})
        (tmp_path / "bad.json").write_text(json.dumps(manifest))
        stack.kubectl("apply", "-f", str(tmp_path / "bad.json"))
        done = await until(stack, api, "badrl", "Succeeded", "Failed", step=5)
        assert done["status"] == "Failed"
        assert (done["ray"]["job_status"], done["ray"]["reason"]) == ("FAILED", "AppFailed")
        assert done["ray"]["message"].startswith(
            "Job entrypoint command failed with exit code 1"), done["ray"]
        assert done["recipe"] == "verl-grpo"
        # max_restarts is KubeRay's backoffLimit: two retries, each on a new Ray cluster
        assert manifest["spec"]["backoffLimit"] == 2
        assert done["restarts"] == {"budget": 2, "spent": 2, "remaining": 0}
        rj = kubectl_json(stack, "get", "rayjob", "badrl")
        assert (rj["status"]["failed"], rj["status"]["succeeded"]) == (3, 0)


async def test_cancel_suspends_then_delete_removes_everything(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(JOBS, json={"name": "stoprl", "recipe": "verl-grpo",
                                       "instance_group": group})
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
        view = await until(stack, api, "stoprl", "Running", step=2)
        cluster_name = view["ray"]["ray_cluster"]
        r = await api.post(f"{JOBS}/stoprl/cancel")
        assert r.status_code == 202, r.text
        assert "spec.suspend" in r.json()["plan"]["action"]
        assert (await finish(api, r.json()))["status"] == "succeeded"
        settle(stack, 5)
        assert (await job(api, "stoprl"))["status"] == "Cancelled"
        assert kubectl_json(stack, "get", "pods", "-l",
                            f"ray.io/cluster={cluster_name}")["items"] == []
        assert "stoprl" not in {j["metadata"]["name"]
                                for j in kubectl_json(stack, "get", "jobs")["items"]}
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{JOBS}/stoprl", params={"confirm": "true"})
        assert r.status_code == 202, r.text
        assert (await finish(admin, r.json()))["status"] == "succeeded"
        assert "stoprl" not in rayjobs(stack)
        assert (await admin.get(f"{JOBS}/stoprl")).status_code == 404


async def test_your_own_rayjob_runs_to_succeeded(cluster: tuple[Stack, str]) -> None:
    """A RayJob of your own: your Ray image for the head and workers, your argv as the
    entrypoint, the recipe jobs' mounts; no rayVersion (optional in the CRD)."""
    stack, group = cluster
    own = {"kind": "RayJob", "image": "rayproject/ray-llm:2.56.0-py312-cu130",
           "command": ["python3", "/data/my_ray_script.py"], "args": ["--steps", "5"]}
    async with stack.client("operator") as api:
        r = await api.post(JOBS, json={"name": "own-rl", "instance_group": group,
                                       "container": own})
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
        done = await until(stack, api, "own-rl", "Succeeded", "Failed")
        assert (done["status"], done["recipe"], done["image"]) == (
            "Succeeded", None, own["image"]), done
        assert done["ray"]["driver_pod"] is not None
    rj = kubectl_json(stack, "get", "rayjob", "own-rl")
    assert rj["spec"]["entrypoint"] == "python3 /data/my_ray_script.py --steps 5"
    assert "rayVersion" not in rj["spec"]["rayClusterSpec"] and "runtimeEnvYAML" not in rj["spec"]
    head = rj["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert {m["mountPath"] for m in head["volumeMounts"]} >= {"/data", "/models", "/outputs"}
