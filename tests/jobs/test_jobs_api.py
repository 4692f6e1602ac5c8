"""Jobs over REST on a podplane-created cluster: the plan's refusals (a 422 naming the field,
no GPUs left, Spot for elastic, a taken name) change nothing in Kubernetes; a dry run shows
GPUs requested vs free and creates nothing; cancel suspends (pods gone, job kept), delete needs
confirmation and removes job and pods; logs are bounded and paged; every mutation is audited."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from typer.testing import CliRunner
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from podplane.cli import app as cli
from tests.groups.conftest import finish
from tests.jobs.conftest import (
    CLUSTER,
    JOBS,
    apply_plan,
    job,
    pods,
    scripts_map,
    settle,
    store,
    submit,
)
from tests.served import serving
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
HP_JOBS = "sagemaker.amazonaws.com/hyperpodpytorchjobs"


def jobs_in_kubernetes(stack: Stack) -> list[str]:
    return sorted(j["metadata"]["name"] for j in store(stack).items(HP_JOBS, "default"))


async def test_refusals_name_the_field_and_change_nothing(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    base = {"name": "refused", "recipe": "pytorch-fsdp", "instance_group": group}
    cases = [({"params": {"sharding": "zero3"}}, 422, "params.sharding"),
             ({"params": {"epochs": 0}}, 422, "params.epochs"),
             ({"params": {"lr": 0.1}}, 422, "params.lr"),
             ({"recipe": "nemo"}, 422, "recipe"),
             ({"instance_group": "nope"}, 422, "instance_group"),
             ({"gpus_per_replica": 4}, 422, "gpus_per_replica")]
    async with stack.client("operator") as api:
        for change, status, field in cases:
            r = await api.post(JOBS, json={**base, **change})
            assert r.status_code == status, (change, r.text)
            assert r.headers["content-type"] == "application/problem+json"
            assert r.json()["field"] == field, (change, r.json())
        r = await api.post(JOBS, json={**base, "replicas": 3})  # 2 one-GPU nodes
        assert r.status_code == 409 and r.json()["code"] == "insufficient_gpus", r.text
        assert "3 GPUs requested, 2 free" in r.json()["detail"]
        r = await api.post(JOBS, json={**base, "name": "Bad_Name"})
        assert r.status_code == 422
    assert jobs_in_kubernetes(stack) == []
    ops = stack.sandbox.kube.get(CLUSTER)
    assert ops is not None


async def test_dry_run_plans_and_creates_nothing(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(JOBS, params={"dry_run": "true"}, json={
            "name": "plan", "recipe": "pytorch-fsdp", "instance_group": group,
            "max_restarts": 4, "params": {"learning_rate": 2e-4}})
        assert r.status_code == 200, r.text
        plan = r.json()["plan"]
    assert (plan["replicas"], plan["gpus_per_replica"], plan["gpus_requested"],
            plan["gpus_free"]) == (2, 1, 2, 2)
    assert plan["capacity_type"] == "on-demand" and plan["params"]["learning_rate"] == 2e-4
    assert plan["manifest"]["spec"]["runPolicy"]["jobMaxRetryCount"] == 4
    assert plan["outputs"]["outputs"].endswith("/outputs/plan/")
    assert jobs_in_kubernetes(stack) == []


async def test_cancel_then_delete_with_logs_paged(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        await submit(api, name="stopme", recipe="pytorch-ddp", instance_group=group,
                     replicas=2)
        r = await api.post(JOBS, json={"name": "stopme", "recipe": "pytorch-ddp",
                                       "instance_group": group, "replicas": 1})
        assert r.status_code == 409, r.text  # name taken (and no GPU left either)
        settle(stack, 10)
        assert (await job(api, "stopme"))["status"] == "Running"
        row = next(j for j in (await api.get(JOBS)).json() if j["name"] == "stopme")
        assert (row["pods"], row["pods_ready"], row["restarts"]) == (
            2, 2, {"budget": 2, "spent": 0, "remaining": 2})
        page = (await api.get(f"{JOBS}/stopme/logs", params={"limit": 3})).json()
        assert [line["pod"] for line in page["lines"]] == ["stopme-pod-0"] * 3
        assert page["next_cursor"] == 3 and page["total"] > 6
        rest = (await api.get(f"{JOBS}/stopme/logs", params={"cursor": 3,
                                                             "limit": 1000})).json()
        assert len(rest["lines"]) == page["total"] - 3 and rest["next_cursor"] is None
        assert {line["pod"] for line in rest["lines"]} == {"stopme-pod-0", "stopme-pod-1"}
        one = (await api.get(f"{JOBS}/stopme/logs", params={"pod": "stopme-pod-1",
                                                            "tail": 2})).json()
        assert len(one["lines"]) == 2 and one["pods"] == ["stopme-pod-1"]
        r = await api.get(f"{JOBS}/stopme/logs", params={"pod": "other-pod-0"})
        assert r.status_code == 404

        r = await api.post(f"{JOBS}/stopme/cancel")
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
        settle(stack, 5)
        assert pods(stack, HPJob="stopme") == {}
        assert (await job(api, "stopme"))["status"] == "Cancelled"
        assert jobs_in_kubernetes(stack) == ["stopme"]
        assert scripts_map(stack, "stopme") is not None  # kept with the cancelled job

        r = await api.delete(f"{JOBS}/stopme", params={"confirm": "true"})
        assert r.status_code == 403  # destroying needs the admin role
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{JOBS}/stopme")
        assert r.status_code == 428 and jobs_in_kubernetes(stack) == ["stopme"]
        r = await admin.delete(f"{JOBS}/stopme", params={"confirm": "true"})
        assert r.status_code == 202, r.text
        assert (await finish(admin, r.json()))["status"] == "succeeded"
        assert jobs_in_kubernetes(stack) == []
        assert scripts_map(stack, "stopme") is None  # the training scripts go with the job
        assert (await admin.get(f"{JOBS}/stopme")).status_code == 404
        audit = (await admin.get("/api/v1/audit", params={"limit": 50})).json()
    actions = [a["action"] for a in audit if a["target"] == f"cluster/{CLUSTER}/job/stopme"]
    assert {"job.submit", "job.cancel", "job.delete"} <= set(actions), actions


async def test_one_websocket_multiplexes_the_pods_and_resumes(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with stack.client("operator") as api:
        await submit(api, name="streamed", recipe="pytorch-ddp", instance_group=group,
                     replicas=2)
        settle(stack, 15)
        rest = (await api.get(f"{JOBS}/streamed/logs", params={"limit": 1000})).json()
    async with serving(stack.app) as base:
        url = f"{base.replace('http://', 'ws://')}{JOBS}/streamed/logs/stream"
        token = {"Authorization": f"Bearer {stack.tokens['viewer']}"}
        everything = await read_ws(f"{url}?follow=false", token)
        assert everything[-1]["type"] == "end"
        lines = [(pod, line) for b in everything if b["type"] == "lines"
                 for pod, line in b["lines"]]
        assert sorted(lines) == sorted((m["pod"], m["line"]) for m in rest["lines"])
        assert {pod for pod, _ in lines} == {"streamed-pod-0", "streamed-pod-1"}
        cursor = everything[-1]["cursor"]
        assert sum(cursor.values()) == len(lines)

        resume = quote(json.dumps({"streamed-pod-0": 4}))  # what a client had when it dropped
        again = await read_ws(f"{url}?follow=false&resume={resume}", token)
        pod0 = [line for b in again if b["type"] == "lines" for pod, line in b["lines"]
                if pod == "streamed-pod-0"]
        assert pod0 == [line for pod, line in lines if pod == "streamed-pod-0"][4:]

        refused = await read_ws(f"{url}?pod=other-0", token, closed=True)
        assert refused == [4404]
        refused = await read_ws(f"{url}", {}, closed=True)
        assert refused == [4401]
    settle(stack, 60)  # the job ends: the module's next tests find the GPUs free


async def read_ws(url: str, headers: dict[str, str], closed: bool = False) -> list[Any]:
    """Every message until the server closes; with `closed`, the close code alone."""
    out: list[Any] = []
    try:
        async with ws_connect(url, additional_headers=headers) as ws:
            async for raw in ws:
                out.append(json.loads(raw))
    except ConnectionClosed as err:
        return [err.rcvd.code if err.rcvd else None]
    if closed:
        return [ws.close_code]
    return out


async def test_same_idempotency_key_same_operation_one_job(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    body = {"name": "once", "recipe": "pytorch-ddp", "instance_group": group}
    key = {"Idempotency-Key": "submit-once-1"}
    async with stack.client("operator") as api:
        first = await api.post(JOBS, json=body, headers=key)
        assert first.status_code == 202, first.text
        assert (await finish(api, first.json()))["status"] == "succeeded"
        settle(stack, 10)  # running: its GPU is taken, the replay must not re-check it
        again = await api.post(JOBS, json=body, headers=key)
        assert again.status_code == 202 and again.json()["id"] == first.json()["id"], again.text
        other = await api.post(JOBS, json={**body, "replicas": 2}, headers=key)
        assert other.status_code == 409, other.text
    assert jobs_in_kubernetes(stack).count("once") == 1
    ledger = [j for j in store(stack).items(HP_JOBS, "default") if j["metadata"]["name"] == "once"]
    assert ledger[0]["metadata"].get("generation", 1) == 1  # applied once, never re-applied
    settle(stack, 60)


async def test_the_cli_submits_lists_gets_and_follows_logs(cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    async with serving(stack.app) as url:
        async def podplane(*args: str) -> Any:
            env = {"PODPLANE_URL": url, "PODPLANE_TOKEN": stack.tokens["operator"],
                   "COLUMNS": "200"}
            done = await asyncio.to_thread(CliRunner().invoke, cli, list(args), env=env)
            assert done.exit_code == 0, (args, done.output)
            return done.output

        assert "llamafactory-lora" in await podplane("job", "recipes")
        plan = await podplane("job", "submit", CLUSTER, "by-cli", "--recipe", "pytorch-ddp",
                              "--group", group, "-p", "epochs=1", "-p", "learning_rate=0.001",
                              "--dry-run")
        assert "\"gpus_requested\": 1" in plan and "by-cli" not in jobs_in_kubernetes(stack)
        submitted = await podplane("job", "submit", CLUSTER, "by-cli", "--recipe",
                                   "pytorch-ddp", "--group", group, "-p", "epochs=1")
        assert "succeeded" in submitted and "admitted" in submitted
        settle(stack, 10)
        assert "by-cli" in await podplane("job", "list", CLUSTER)
        got = await podplane("job", "get", CLUSTER, "by-cli")
        assert "Running" in got and "restarts 0/2 spent" in got and "Schedulable" in got
        settle(stack, 60)
        logs = await podplane("job", "logs", CLUSTER, "by-cli", "-f")  # ended: returns
        assert "by-cli-pod-0 [rank 0] step 10 " in logs, logs
        assert logs.count("initializing process group") == 1


OWN = {"kind": "PyTorchJob", "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
       "command": ["python", "/data/my_script.py"], "args": ["--epochs", "1"],
       "env": {"MY_FLAG": "on"}}


async def ran_to_the_end(stack: Stack, api: Any, name: str) -> dict[str, Any]:
    """The job's view once it ended (the sandbox's training loop ends on its own)."""
    for _ in range(60):
        settle(stack, 10)
        view = await job(api, name)
        if view["status"] in ("Succeeded", "Failed"):
            return view
    raise AssertionError(f"{name} did not end: {view['status']}")


async def test_your_own_container_is_refused_naming_the_field(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    base = {"name": "own", "instance_group": group}
    cases = [({}, "recipe"), ({"recipe": "pytorch-ddp", "container": OWN}, "container"),
             ({"container": OWN, "params": {"epochs": 1}}, "params"),
             ({"container": {**OWN, "image": "Not An Image"}}, "container.image"),
             ({"container": {**OWN, "command": []}}, "container.command"),
             ({"container": {**OWN, "env": {"BAD-NAME": "x"}}}, "container.env.BAD-NAME"),
             ({"container": {**OWN, "kind": "TFJob"}}, "container.kind"),
             ({"container": OWN, "elastic": True}, "elastic")]
    before = jobs_in_kubernetes(stack)
    async with stack.client("operator") as api:
        for change, field in cases:
            r = await api.post(JOBS, json={**base, **change})
            assert r.status_code == 422, (change, r.text)
            named = r.json().get("field") or r.json()["detail"]  # schema refusals: "loc: msg"
            assert named.startswith(field), (change, r.json())
        settings = stack.app.state.podplane.settings  # an admin restricts registries
        settings.allowed_image_registries = ["public.ecr.aws"]
        try:
            for change, field in (({"container": OWN}, "container.image"),
                                  ({"recipe": "pytorch-ddp",
                                    "params": {"image": OWN["image"]}}, "params.image")):
                r = await api.post(JOBS, json={**base, **change})
                assert r.status_code == 422 and r.json()["field"] == field, r.text
            r = await api.post(JOBS, params={"dry_run": "true"},
                               json={**base, "recipe": "pytorch-ddp"})
            assert r.status_code == 200, r.text  # a recipe's own image is podplane's choice
        finally:
            settings.allowed_image_registries = []
        assert (await api.get(f"{JOBS}/own")).status_code == 404
    assert jobs_in_kubernetes(stack) == before


async def test_your_own_container_runs_to_succeeded_from_rest_and_the_cli(
        cluster: tuple[Stack, str]) -> None:
    """Your image and argv, with the recipe jobs' mounts, placement, budget, logs and events;
    listed as podplane's with no recipe and its image."""
    stack, group = cluster
    async with stack.client("operator") as api:
        await submit(api, name="own-rest", instance_group=group, container=OWN)
        view = await ran_to_the_end(stack, api, "own-rest")
        assert view["status"] == "Succeeded" and view["kind"] == "PyTorchJob", view
        assert (view["recipe"], view["image"], view["managed_by"]) == (
            None, OWN["image"], "podplane")
        assert view["restarts"] == {"budget": 2, "spent": 0, "remaining": 2}
        assert view["pods"][0]["node_verdict"]["health"] == "Schedulable"
        pod = pods(stack, **{"training.kubeflow.org/job-name": "own-rest"})["own-rest-master-0"]
        container = pod["spec"]["containers"][0]
        assert (container["command"], container["args"]) == (OWN["command"], OWN["args"])
        assert {m["mountPath"] for m in container["volumeMounts"]} >= {
            "/data", "/models", "/checkpoints", "/outputs"}
        logs = (await api.get(f"{JOBS}/own-rest/logs", params={"limit": 1000})).json()
        assert any("step 10 " in line["line"] for line in logs["lines"]), logs
        events = (await api.get(f"{JOBS}/own-rest/events")).json()
        assert any(e["object"] == "own-rest-master-0" and e["reason"] == "Scheduled"
                   for e in events), events
        row = next(j for j in (await api.get(JOBS)).json() if j["name"] == "own-rest")
        assert (row["recipe"], row["image"]) == (None, OWN["image"])

    async with serving(stack.app) as url:
        env = {"PODPLANE_URL": url, "PODPLANE_TOKEN": stack.tokens["operator"],
               "COLUMNS": "200"}
        args = ["job", "submit", CLUSTER, "own-cli", "--group", group, "--image",
                OWN["image"], "--env", "MY_FLAG=on", "--", "python", "/data/my_script.py"]
        done = await asyncio.to_thread(CliRunner().invoke, cli, args, env=env)
        assert done.exit_code == 0 and "succeeded" in done.output, done.output
        async with stack.client("operator") as api:
            assert (await ran_to_the_end(stack, api, "own-cli"))["status"] == "Succeeded"
        listed = await asyncio.to_thread(CliRunner().invoke, cli, ["job", "list", CLUSTER],
                                         env=env)
        # the row shows the image where a recipe job shows its recipe (rich may cut the cell
        # to the terminal's width, which CliRunner does not set)
        row = next(line for line in listed.output.splitlines() if "own-cli" in line)
        assert "PyTorchJob" in row and OWN["image"][:11] in row, listed.output


async def test_elastic_is_refused_on_a_spot_group_last(cluster: tuple[Stack, str]) -> None:
    """Last in the module: the new group's operation keeps stepping the clock."""
    stack, _ = cluster
    async with stack.client("operator") as api:
        r = await api.post(f"/api/v1/clusters/{CLUSTER}/instance-groups", json={
            "name": "spot", "instance_type": "ml.g5.8xlarge", "count": 1,
            "capacity_type": "spot", "availability_zone": "us-west-2a"})
        assert r.status_code == 202, r.text
        for _ in range(20):  # the group exists once UpdateCluster ran (its nodes come later)
            await api.get(f"/api/v1/operations/{r.json()['id']}/wait", params={"timeout": 5})
            groups = (await api.get(f"/api/v1/clusters/{CLUSTER}/instance-groups")).json()
            if any(g["name"] == "spot" for g in groups):
                break
        spot = next(g for g in groups if g["name"] == "spot")
        assert spot["capacity_type"] == "spot"
        r = await api.post(JOBS, json={"name": "elastic", "recipe": "pytorch-ddp",
                                       "instance_group": "spot", "elastic": True})
        assert r.status_code == 422 and r.json()["field"] == "elastic", r.text
    assert "elastic" not in jobs_in_kubernetes(stack)


async def test_a_running_job_whose_logs_stop_is_stalled(cluster: tuple[Stack, str],
                                                        tmp_path: Path) -> None:
    """A hung collective (applied with kubectl, as any tool could: the sandbox's workers stop
    writing after 20 s and stay alive): stalled once every running pod has been silent for
    10 virtual minutes, with the newest line's time as the kubelet stamps it."""
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(JOBS, params={"dry_run": "true"}, json={
            "name": "hung", "recipe": "pytorch-ddp", "instance_group": group, "replicas": 1})
        plan = r.json()["plan"]
    manifest = plan["manifest"]
    template = manifest["spec"]["replicaSpecs"][0]["template"]
    # without log-monitoring rules (as another tool may submit it): the operator's own hang
    # rule would restart the job after 15 silent minutes (tests/sandbox_kube, log monitoring)
    del manifest["spec"]["runPolicy"]["logMonitoringConfiguration"]
    template.setdefault("metadata", {}).setdefault("annotations", {}).update({
        "sandbox.podplane.io/hang-after-seconds": "20",
        "sandbox.podplane.io/duration-seconds": "3600"})
    apply_plan(stack, tmp_path, plan, manifest)
    settle(stack, 10)
    recent = ["logs", "hung-pod-0", "--since=600s", "--tail=1"]
    async with stack.client("viewer") as api:
        view = await job(api, "hung")
        assert stack.kubectl(*recent).strip()  # the kubectl judge: a line in the last 10 min
        assert (view["status"], view["stalled"]) == ("Running", None)
        settle(stack, 700)  # (the engine's own sleeps move the clock too: no exact "not yet")
        view = await job(api, "hung")
    assert stack.kubectl(*recent) == ""
    stamp, line = stack.kubectl("logs", "hung-pod-0", "--timestamps", "--tail=1").split(" ", 1)
    assert "step" in line
    assert view["status"] == "Running"
    assert view["stalled"] == {"since_seconds": 600, "last_line_at": stamp, "pod": "hung-pod-0"}
    settings = stack.app.state.podplane.settings  # PODPLANE_JOB_STALL_SECONDS
    settings.job_stall_seconds = 3600
    try:
        async with stack.client("viewer") as api:
            assert (await job(api, "hung"))["stalled"] is None  # silent, but not for an hour
    finally:
        settings.job_stall_seconds = 600
    async with stack.client("admin") as admin:
        r = await admin.delete(f"{JOBS}/hung", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"
