"""Every recipe submitted by an agent through MCP in at most five tool calls (counted on the
MCP client), run to Succeeded in the sandbox; what Kubernetes then holds is the rendered job
(kind, replicas, the shared bucket's mounts at the same paths, health-gated placement)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.client.client import Client

from podplane.domain.jobs.kinds import KINDS
from podplane.domain.jobs.recipes import RECIPES, Recipe
from podplane.domain.jobs.scripts import SCRIPTS_DIR
from tests.groups.conftest import finish
from tests.jobs.conftest import job, pods, scripts_map, settle, store, submit
from tests.mcp.conftest import mcp_client, structured
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MAX_CALLS = 5


class Counted:
    """The MCP client, counting every tool call the agent makes."""

    def __init__(self, client: Client) -> None:
        self.client, self.calls = client, 0

    async def __call__(self, tool: str, **args: Any) -> dict[str, Any]:
        self.calls += 1
        result = await self.client.call_tool(tool, args)
        assert not result.is_error, structured(result)
        return structured(result)


async def agent_submits(agent: Counted, recipe: str, group: str, job: str) -> dict[str, Any]:
    """What an agent does: read the recipe, ask for the plan, submit, wait, read the job."""
    found = next(r for r in (await agent("job_recipes"))["result"] if r["name"] == recipe)
    params = {p["name"]: p["default"] for p in found["params"]}
    body = {"cluster": "alpha", "name": job, "recipe": recipe, "instance_group": group,
            "params": params}
    plan = (await agent("job_submit", **body, dry_run=True))["result"]["plan"]
    assert plan["gpus_requested"] <= plan["gpus_free"], plan
    submitted = await agent("job_submit", **body)
    assert submitted["next"]["tool"] == "operation_wait"
    # without `revision`, operation_wait returns when the operation ends (or at its timeout)
    waited = await agent("operation_wait", operation_id=submitted["result"]["id"])
    assert waited["result"]["status"] == "succeeded", waited
    return (await agent("job_get", cluster="alpha", job=job))["result"]


async def test_every_recipe_from_mcp_in_five_calls_runs_to_succeeded(
        cluster: tuple[Stack, str]) -> None:
    stack, group = cluster
    assert len(RECIPES) >= 5
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        # RayJob recipes need the kuberay feature: test_rayjob_api.py runs them the same way
        for recipe in [r for r in RECIPES if r.kind != "RayJob"]:
            job = f"r-{recipe.name}"
            agent = Counted(client)
            view = await agent_submits(agent, recipe.name, group, job)
            assert agent.calls <= MAX_CALLS, (recipe.name, agent.calls)
            assert view["kind"] == recipe.kind and view["status"] in ("Pending", "Running")
            settle(stack, 10)
            for _ in range(60):  # the sandbox's training loop ends on its own
                settle(stack, 10)
                view = (await Counted(client)("job_get", cluster="alpha", job=job))["result"]
                if view["status"] in ("Succeeded", "Failed"):
                    break
            assert view["status"] == "Succeeded", view
            _check_kubernetes(stack, recipe.kind, job, group)
            _check_scripts(stack, recipe, job)
            _check_outputs(stack, view, job)


async def test_your_own_container_from_mcp_runs_to_succeeded(
        cluster: tuple[Stack, str]) -> None:
    """An agent's own workload (image and argv, a script in the bucket): plan, submit, wait,
    read; the pods are placed and mounted as a recipe job's."""
    stack, group = cluster
    own = {"image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
           "command": ["python", "/data/my_script.py"]}
    body = {"cluster": "alpha", "name": "own-mcp", "instance_group": group, "container": own}
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        agent = Counted(client)
        plan = (await agent("job_submit", **body, dry_run=True))["result"]["plan"]
        assert (plan["recipe"], plan["image"], plan["kind"]) == (
            None, own["image"], "PyTorchJob"), plan
        submitted = await agent("job_submit", **body)
        waited = await agent("operation_wait", operation_id=submitted["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        for _ in range(60):
            settle(stack, 10)
            view = (await agent("job_get", cluster="alpha", job="own-mcp"))["result"]
            if view["status"] in ("Succeeded", "Failed"):
                break
    assert view["status"] == "Succeeded" and view["recipe"] is None, view
    _check_kubernetes(stack, "PyTorchJob", "own-mcp", group)
    assert scripts_map(stack, "own-mcp") is None  # no recipe, no training scripts


def _check_kubernetes(stack: Stack, kind: str, job: str, group: str) -> None:
    kind_ = KINDS[kind]
    found = pods(stack, **kind_.selector(job))
    assert found, f"no pods for {job}"
    for pod in found.values():
        spec = pod["spec"]
        mounts = {m["mountPath"]: m.get("subPath") for m in spec["containers"][0]["volumeMounts"]}
        assert mounts["/data"] == "data" and mounts["/models"] == "models"
        assert mounts["/checkpoints"] == f"checkpoints/{job}"
        assert mounts["/outputs"] == f"outputs/{job}"
        claim = next(v for v in spec["volumes"] if "persistentVolumeClaim" in v)
        assert claim["persistentVolumeClaim"]["claimName"] == "s3-claim"
        terms = spec["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        exprs = {e["key"]: e["values"] for e in terms[0]["matchExpressions"]}
        assert exprs["sagemaker.amazonaws.com/node-health-status"] == ["Schedulable"]
        assert exprs["sagemaker.amazonaws.com/instance-group-name"] == [group]
        assert pod["status"]["phase"] == "Succeeded"


def _check_scripts(stack: Stack, recipe: Recipe, job: str) -> None:
    """The training scripts the command runs came with the job: its ConfigMap, owned by the
    job, mounted where the command reads them, and the command found its launcher in the
    image (it installs the elastic agent first: the sandbox knows the image's contents)."""
    shipped = scripts_map(stack, job)
    if not recipe.scripts:
        assert shipped is None
        return
    assert shipped is not None and set(shipped["data"]) == set(recipe.scripts)
    owner = shipped["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == (recipe.kind, job)
    for pod in pods(stack, **KINDS[recipe.kind].selector(job)).values():
        container = pod["spec"]["containers"][0]
        assert {"name": "training-scripts", "mountPath": SCRIPTS_DIR, "readOnly": True} in \
            container["volumeMounts"]
        assert "exec hyperpodrun " in container["command"][2]
        assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def _check_outputs(stack: Stack, view: dict[str, Any], job: str) -> None:
    """Rank 0 saved its result through the bucket mount: S3 itself holds the objects under
    the job's prefixes, and the job view lists exactly those."""
    bucket = view["outputs"]["outputs"].removeprefix("s3://").split("/", 1)[0]
    s3 = stack.aws("s3")
    held = {o["Key"] for prefix in (f"outputs/{job}/", f"checkpoints/{job}/")
            for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])}
    assert {f"outputs/{job}/config.json", f"outputs/{job}/model.safetensors",
            f"outputs/{job}/train_results.json"} <= held, held
    assert any(k.startswith(f"checkpoints/{job}/checkpoint-") for k in held), held
    assert {f["key"] for f in view["files"]} == held
    assert {f["kind"] for f in view["files"]} == {"outputs", "checkpoints"}


async def test_a_kubeflow_job_cancelled_is_suspended(cluster: tuple[Stack, str]) -> None:
    """Kubeflow's own switch: runPolicy.suspend deletes the pods and sets Suspended."""
    stack, group = cluster
    async with stack.client("operator") as api:
        await submit(api, name="kf-stop", recipe="swift-sft", instance_group=group, replicas=2)
        settle(stack, 10)
        assert set(pods(stack, **{"training.kubeflow.org/job-name": "kf-stop"})) == {
            "kf-stop-master-0", "kf-stop-worker-0"}
        # swift runs torchrun only when told NPROC_PER_NODE or NNODES (launchers.py)
        assert await _first_lines(api, "kf-stop") == {
            "kf-stop-master-0": "[rank 0] initializing process group (backend=nccl, "
                                "world_size=2)",
            "kf-stop-worker-0": "[rank 1] initializing process group (backend=nccl, "
                                "world_size=2)"}
        r = await api.post("/api/v1/clusters/alpha/jobs/kf-stop/cancel")
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
        settle(stack, 5)
        assert pods(stack, **{"training.kubeflow.org/job-name": "kf-stop"}) == {}
        view = (await api.get("/api/v1/clusters/alpha/jobs/kf-stop")).json()
    assert view["status"] == "Cancelled"
    suspended = next(c for c in view["conditions"] if c["type"] == "Suspended")
    assert suspended["status"] == "True" and suspended["reason"] == "PyTorchJobSuspended"


async def test_a_result_the_mount_role_may_not_write_fails_the_job(
        cluster: tuple[Stack, str]) -> None:
    """Mountpoint writes with the CSI driver's role: with s3:PutObject taken from that role
    (by hand, in IAM), rank 0 cannot save its result, the process fails, and so does the
    job; nothing lands under its prefix."""
    stack, group = cluster
    eks, iam, s3 = stack.aws("eks"), stack.aws("iam"), stack.aws("s3")
    eks_name = eks.list_clusters()["clusters"][0]
    (assoc,) = [a for a in eks.list_pod_identity_associations(clusterName=eks_name)
                ["associations"] if a["serviceAccount"] == "s3-csi-driver-sa"]
    role = eks.describe_pod_identity_association(
        clusterName=eks_name, associationId=assoc["associationId"]
    )["association"]["roleArn"].rsplit("/", 1)[1]
    saved = {n: iam.get_role_policy(RoleName=role, PolicyName=n)["PolicyDocument"]
             for n in iam.list_role_policies(RoleName=role)["PolicyNames"]}
    assert not iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    for name in saved:
        iam.delete_role_policy(RoleName=role, PolicyName=name)
    iam.put_role_policy(RoleName=role, PolicyName="read-only", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*",
                                                "Action": ["s3:ListBucket", "s3:GetObject"]}]}))
    try:
        async with stack.client("operator") as api:
            await submit(api, name="no-write", recipe="pytorch-ddp", instance_group=group)
            for _ in range(60):
                settle(stack, 10)
                view = await job(api, "no-write")
                if view["status"] in ("Succeeded", "Failed"):
                    break
    finally:
        iam.delete_role_policy(RoleName=role, PolicyName="read-only")
        for name, doc in saved.items():
            iam.put_role_policy(RoleName=role, PolicyName=name, PolicyDocument=json.dumps(doc))
    assert view["status"] == "Failed", view["status"]
    events = [e for e in store(stack).items("events", "default")
              if e.get("reason") == "OutputWriteFailed"]
    assert events and "AccessDenied" in events[0]["message"], events
    bucket = view["outputs"]["outputs"].removeprefix("s3://").split("/", 1)[0]
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="outputs/no-write/")
    assert view["files"] == []


async def test_a_name_kubeflow_would_refuse_is_refused_on_rest_and_mcp(
        cluster: tuple[Stack, str]) -> None:
    """Kubeflow's operator refuses a PyTorchJob whose name is not DNS-1035 and then does
    nothing with it (the sandbox's kubeflow_validation.py): podplane refuses it first, with the
    rule, on every face, and creates nothing."""
    stack, group = cluster
    body = {"name": "1st-lora", "recipe": "llamafactory-lora", "instance_group": group}
    async with stack.client("operator") as api:
        r = await api.post("/api/v1/clusters/alpha/jobs", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["loc"] == ["body", "name"]
    assert "must be a DNS-1035 label" in r.json()["detail"], r.json()
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        result = await client.call_tool("job_submit", {"cluster": "alpha", **body})
    assert result.is_error, result
    refused = structured(result)["error"]
    assert refused["status"] == 422 and "name: The job's name: a DNS-1035 label" in \
        refused["hint"], refused
    assert "1st-lora" not in {j["metadata"]["name"] for j in
                              store(stack).items("kubeflow.org/pytorchjobs", "default")}


async def _first_lines(api: Any, job_name: str) -> dict[str, str]:
    """Each pod's first log line (the process group it joined)."""
    logs = (await api.get(f"/api/v1/clusters/alpha/jobs/{job_name}/logs",
                          params={"limit": 1000})).json()["lines"]
    first: dict[str, str] = {}
    for line in logs:
        first.setdefault(line["pod"], line["line"])
    return first


async def test_llamafactory_on_two_replicas_trains_as_two_ranks(
        cluster: tuple[Stack, str]) -> None:
    """llamafactory-cli passes torchrun `--nnodes $NNODES --node_rank $NODE_RANK` itself
    (defaults 1 and 0), so Kubeflow's RANK/PET_* reach it only through what podplane sets: two
    replicas are one job of two ranks, and only rank 0 saves the result."""
    stack, group = cluster
    async with stack.client("operator") as api:
        await submit(api, name="lf-two", recipe="llamafactory-lora", instance_group=group,
                     replicas=2)
        for _ in range(60):
            settle(stack, 10)
            view = await job(api, "lf-two")
            if view["status"] in ("Succeeded", "Failed"):
                break
        assert await _first_lines(api, "lf-two") == {
            "lf-two-master-0": "[rank 0] initializing process group (backend=nccl, "
                               "world_size=2)",
            "lf-two-worker-0": "[rank 1] initializing process group (backend=nccl, "
                               "world_size=2)"}
    assert view["status"] == "Succeeded", view
    _check_outputs(stack, view, "lf-two")
