"""Issue 31's contract over every operation kind of the engine's registry, with the
observation cache at production retention on a stopped clock (every read of a case inside one
interval): after an operation reports `succeeded`, its target's views on REST and MCP show
what it did, the same request again starts nothing, and its plan is empty.

A kind added to the registry fails `test_every_kind_has_a_case` until it has a case here (or
a reason in NOT_YET, which the report of issue 31 lists)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.clusters.helpers import BODY
from tests.groups.conftest import finish
from tests.mcp.conftest import mcp_client, structured
from tests.truth.conftest import World
from tests.truth.contract import Case, Request, View, fields_are, operations_of, run_case
from tests.truth.test_groups import KINDS as GROUP_KINDS
from tests.truth.test_nodes_pools import KINDS as NODE_POOL_KINDS

pytestmark = pytest.mark.asyncio(loop_scope="package")
C = BODY["name"]
API = f"/api/v1/clusters/{C}"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"

# Kinds without a case yet, and why (each is a gap of issue 31 until it has one).
NOT_YET: dict[str, str] = {}
SPACE = {"name": "sp1", "cpu": "500m", "memory": "2Gi", "storage_gib": 5}
AUTO = {"min_replicas": 1, "max_replicas": 2, "metric": "running", "target": 4,
        "cooldown_seconds": 120}


def _exists(body: Any) -> None:
    assert isinstance(body, dict) and body, "empty view"


def _model_complete(body: Any) -> None:
    found = {m["name"]: m["complete"] for m in body}
    assert found.get("tiny") is True, f"model 'tiny' complete: {found}"


def _autoscaled(body: Any) -> None:
    got = body.get("autoscaling") or {}
    want = {"min_replicas": 1, "max_replicas": 2}
    assert {k: got.get(k) for k in want} == want, f"autoscaling: {got}"


def cases(group: str) -> list[Case]:
    """In the order they run: later cases use what earlier ones made."""
    ckpt = View(f"{API}/features/tiered-checkpointing", "feature_get",
                {"cluster": C, "feature": "tiered-checkpointing"},
                fields_are(observed_enabled=True, drifted=False))
    job = View(f"{API}/jobs/ft1", "job_get", {"cluster": C, "job": "ft1"}, _exists)
    llm = View(f"{API}/endpoints/llm1", "endpoint_get", {"cluster": C, "name": "llm1"},
               _exists)
    space = View(f"{API}/spaces/sp1", "space_get", {"cluster": C, "name": "sp1"}, _exists)
    return [
        Case("feature.set", Request("PATCH", f"{API}/features/tiered-checkpointing",
                                    {"enabled": True}), (ckpt,)),
        Case("job.submit", Request("POST", f"{API}/jobs", {
            "name": "ft1", "recipe": "pytorch-ddp", "instance_group": group, "replicas": 1}),
            (job,)),
        Case("job.cancel", Request("POST", f"{API}/jobs/ft1/cancel"), (job,), dry_run=False),
        Case("endpoint.create", Request("POST", f"{API}/endpoints", {
            "name": "llm1", "instance_group": group, "model": MODEL, "max_model_len": 2048}),
            (llm,)),
        Case("endpoint.update", Request("PATCH", f"{API}/endpoints/llm1",
                                        {"max_model_len": 4096}),
             (View(llm.path, llm.tool, llm.args, fields_are(max_model_len=4096)),)),
        Case("endpoint.scale", Request("PATCH", f"{API}/endpoints/llm1", {"replicas": 2}),
             (View(llm.path, llm.tool, llm.args, fields_are(replicas=2)),)),
        Case("endpoint.autoscale", Request("PATCH", f"{API}/endpoints/llm1",
                                           {"autoscaling": AUTO}),
             (View(llm.path, llm.tool, llm.args, _autoscaled),)),
        Case("job.delete", Request("DELETE", f"{API}/jobs/ft1", params={"confirm": "true"}),
             (View(job.path, job.tool, job.args, None),), repeat_conflict="not_found"),
        Case("endpoint.delete", Request("DELETE", f"{API}/endpoints/llm1",
                                        params={"confirm": "true"}),
             (View(llm.path, llm.tool, llm.args, None),), repeat_conflict="not_found"),
        Case("space.create", Request("POST", f"{API}/spaces", SPACE), (
            View(space.path, space.tool, space.args, fields_are(state="Running")),)),
        Case("space.state", Request("PATCH", f"{API}/spaces/sp1", {"desired": "Stopped"}), (
            View(space.path, space.tool, space.args, fields_are(state="Stopped", pods=[])),)),
        Case("space.delete", Request("DELETE", f"{API}/spaces/sp1"),
             (View(space.path, space.tool, space.args, None),), repeat_conflict="not_found"),
        Case("model.download", Request("POST", f"{API}/models", {
            "name": "tiny", "source": "sandbox-models/tiny-chat"}),
            (View(f"{API}/models", "model_list", {"cluster": C}, _model_complete),),
            role="operator"),
        Case("cluster.reconcile", Request("POST", f"{API}/reconcile"),
             (View(API, "cluster_get_status", {"name": C}, fields_are(state="active", drift=None)),
              )),
    ]


KINDS = [c.kind for c in cases("g")]


async def test_every_kind_has_a_case(world: World) -> None:
    registry = set(world.stack.app.state.podplane.ops.workflows.kinds())
    assert not {*KINDS, *GROUP_KINDS, *NODE_POOL_KINDS} & set(NOT_YET)
    covered = {*KINDS, *GROUP_KINDS, *NODE_POOL_KINDS, "cluster.create", *NOT_YET}
    assert registry - covered == set(), f"kinds with no case: {sorted(registry - covered)}"
    assert covered - registry == set(), f"cases of no kind: {sorted(covered - registry)}"


async def test_cluster_create_is_seen_done(world: World) -> None:
    """The fixture created the cluster through podplane; its views, the same create again
    and its plan."""
    problems: list[str] = []
    async with world.stack.client("admin") as api:
        r = await api.get(API)
        if r.status_code != 200 or r.json().get("state") != "active":
            problems.append(f"GET {API}: {r.status_code} {r.text[:300]}")
        before = await operations_of(api, "cluster.create")
        again = await api.post("/api/v1/clusters", json=BODY)
        if again.status_code != 200 or again.json().get("changed") is not False:
            problems.append(f"create again: {again.status_code} {again.text[:300]}")
        if await operations_of(api, "cluster.create") != before:
            problems.append("create again started an operation")
    assert problems == []


async def test_agent_submits_waits_reads_the_job_and_its_logs_with_no_retry(
        world: World) -> None:
    """Issue 31's agent flow over MCP, each call once: job_submit, operation_wait, job_get,
    job_logs (an agent that follows the tools' `next` hints never sees the job vanish)."""
    async with mcp_client(world.stack.app, world.stack.tokens["operator"]) as mcp:
        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result = await mcp.call_tool(tool, args)
            assert not result.is_error, (tool, result.content[0].text)  # type: ignore[union-attr]
            return structured(result)["result"]  # type: ignore[no-any-return]

        await call("job_list", cluster=C)  # the agent looked before: the job is not there
        submitted = await call("job_submit", cluster=C, name="agent1", recipe="pytorch-ddp",
                               instance_group=world.group, replicas=1)
        waited = await call("operation_wait", operation_id=submitted["id"])
        assert waited["status"] == "succeeded", waited
        job = await call("job_get", cluster=C, job="agent1")
        logs = await call("job_logs", cluster=C, job="agent1")
    assert job["name"] == "agent1" and logs["job"] == "agent1"
    assert logs["pods"], logs  # its pod, with lines or a note why there are none yet
    async with world.stack.client("admin") as admin:  # the GPU back for the cases below
        r = await admin.delete(f"{API}/jobs/agent1", params={"confirm": "true"})
        assert (await finish(admin, r.json()))["status"] == "succeeded"


@pytest.mark.parametrize("kind", KINDS)
async def test_finished_operation_is_what_every_read_shows(world: World, kind: str) -> None:
    case = next(c for c in cases(world.group) if c.kind == kind)
    if kind == "cluster.reconcile":  # something to repair: an add-on deleted out of band
        world.stack.aws("eks").delete_addon(clusterName=C, addonName="cert-manager")
        world.stack.advance(10 * 60)
        world.clock.advance(60)  # the outside change is seen at the next interval
    if kind == "endpoint.autoscale":  # autoscaling needs KEDA, turned on outside the case
        await _feature_on(world, "keda")
    if kind.startswith("space."):  # spaces need their feature, turned on outside the case
        await _feature_on(world, "spaces")
    async with world.stack.client(case.role) as api, \
            mcp_client(world.stack.app, world.stack.tokens[case.role]) as mcp:
        problems = await run_case(api, mcp, case)
    assert problems == [], "\n".join(problems)


async def _feature_on(world: World, feature: str) -> None:
    async with world.stack.client("admin") as api:
        r = await api.patch(f"{API}/features/{feature}", json={"enabled": True})
        if r.status_code == 200 and r.json()["changed"] is False:
            return   # on already (an earlier case)
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
