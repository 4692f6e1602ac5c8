"""Issue 31's contract for the kinds that use up the world they run in: a warm pool's whole
life (create, scale, assign an endpoint, unassign, delete), a node's reboot, replace and
delete, and last a cluster's import and the created cluster's delete. They run on a copy of the
run's created cluster of their own (the package's `world` is shared by modules that count its
nodes), with the cache at production retention on a stopped clock, like
tests/truth/test_every_kind."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.clusters.helpers import BODY
from tests.clusters.test_import import make_outside_cluster
from tests.golden import created_stack
from tests.jobs.conftest import group_of
from tests.mcp.conftest import mcp_client
from tests.truth.conftest import StoppedClock, World, production_cache
from tests.truth.contract import Case, Request, View, fields_are, run_case

pytestmark = pytest.mark.asyncio(loop_scope="module")
C = BODY["name"]
API = f"/api/v1/clusters/{C}"
POOL = f"{API}/pools/warm1"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    """This module's own copy, in place of the package's shared one."""
    async with created_stack(tmp_path_factory, "truth-nodes") as stack:
        clock = StoppedClock()
        cache = production_cache(stack, clock)
        yield World(stack, await group_of(stack), clock, cache)


def _exists(body: Any) -> None:
    assert isinstance(body, dict) and body, "empty view"


def _healthy(body: Any) -> None:
    health = body["health"]
    got = (health["instance_status"], health["kubernetes_ready"], health["state"])
    assert got == ("Running", True, "healthy"), f"health after the reboot: {health}"


def _nccl_done(body: Any) -> None:
    assert body.get("status") == "succeeded", f"the test's verdict: {body}"


def _without(node: str, count: int) -> Any:
    def check(body: Any) -> None:
        ids = [n["id"] for n in body]
        assert node not in ids and len(ids) == count, f"expected {count} nodes without " \
            f"{node}, got {ids}"
    return check


def pool_cases(group: str) -> list[Case]:
    pool = POOL
    ep2 = View(f"{API}/endpoints/ep2", "endpoint_get", {"cluster": C, "name": "ep2"},
               _exists)
    # MCP has no read of a pool (pool_scale and pool_assign answer with it): REST only.
    return [
        Case("pool.create", Request("POST", f"{API}/pools", {
            "name": "warm1", "instance_group": group, "model": MODEL, "max_model_len": 2048,
            "replicas": 1}), (View(pool, None, {}, fields_are(replicas=1, ready=1)),)),
        Case("pool.scale", Request("PATCH", pool, {"replicas": 2}),
             (View(pool, None, {}, fields_are(replicas=2, ready=2)),)),
        Case("pool.assign", Request("POST", f"{pool}/assign", {"endpoint": "ep2", "pods": 1}),
             (View(pool, None, {}, fields_are(assigned=["ep2"])), ep2), dry_run=False),
        Case("pool.assign", Request("POST", f"{pool}/assign", {
            "endpoint": "ep2", "pods": 0, "confirm": True}),
            (View(pool, None, {}, fields_are(assigned=[], free=2)),
             View(ep2.path, ep2.tool, ep2.args, None)), dry_run=False, label="unassign"),
        Case("pool.delete", Request("DELETE", pool, params={"confirm": "true"}),
             (View(pool, None, {}, None),), repeat_conflict="not_found"),
    ]


def node_cases(nodes: list[str]) -> list[Case]:
    """`nodes`: the group's two node ids. An NCCL test, a reboot and a replace are actions (a
    replay of their key must answer the same operation); a delete repeated is a 404."""
    first, second = nodes

    def node(iid: str, check: Any) -> View:
        return View(f"{API}/nodes/{iid}", "node_describe", {"cluster": C, "node": iid}, check)

    every = f"{API}/nodes"
    listed = {"cluster": C}
    verdict = View(f"{API}/diagnostics/nccl/{{op}}", "operation_get", {"operation_id": "{op}"},
                   _nccl_done)
    return [
        # A test run is an action: the same request again runs another test, unless it
        # carries the first one's key.
        Case("diagnose.nccl", Request("POST", f"{API}/diagnostics/nccl", {"nodes": nodes},
                                      key="nccl-1"), (verdict,), dry_run=False, replay=True),
        Case("node.reboot", Request("POST", f"{API}/nodes/{first}/reboot", key="reboot-1"),
             (node(first, _healthy),), dry_run=False, replay=True),
        Case("node.replace", Request("POST", f"{API}/nodes/{first}/replace",
                                     params={"confirm": "true"}, key="replace-1"),
             (node(first, None), View(every, "node_list", listed, _without(first, 2))),
             dry_run=False, replay=True, advance=3600),
        Case("node.delete", Request("DELETE", f"{API}/nodes/{second}",
                                    params={"confirm": "true"}),
             (node(second, None), View(every, "node_list", listed, _without(second, 1))),
             repeat_conflict="not_found"),
    ]


def cluster_import() -> Case:
    """Of `legacy`, made in the sandbox straight through its AWS API (tests/clusters)."""
    return Case("cluster.import", Request("POST", "/api/v1/clusters/import", {
        "name": "legacy", "hyperpod_cluster_name": "legacy-hp"}),
        (View("/api/v1/clusters/legacy", "cluster_get_status", {"name": "legacy"},
              fields_are(origin="imported", state="active")),), dry_run=False)


def cluster_delete() -> Case:
    return Case("cluster.delete", Request("DELETE", API, params={"confirm": "true"}),
                (View(API, "cluster_get_status", {"name": C}, None),),
                repeat_conflict="not_found", dry_run=False)


KINDS = sorted({c.kind for c in [*pool_cases("g"), *node_cases(["i-0", "i-1"]),
                                 cluster_import(), cluster_delete()]})


async def _run(world: World, cases: list[Case]) -> list[str]:
    problems: list[str] = []
    for case in cases:
        async with world.stack.client(case.role) as api, \
                mcp_client(world.stack.app, world.stack.tokens[case.role]) as mcp:
            problems += [f"{case.name}: {p}" for p in await run_case(api, mcp, case,
                                                                   world.stack.advance)]
    return problems


async def test_a_pools_life_is_what_every_read_shows(world: World) -> None:
    problems = await _run(world, pool_cases(world.group))
    assert problems == [], "\n".join(problems)


async def test_node_actions_are_what_every_read_shows(world: World) -> None:
    async with world.stack.client("viewer") as api:
        nodes = sorted(n["id"] for n in (await api.get(f"{API}/nodes")).json())
    assert len(nodes) == 2, nodes
    problems = await _run(world, node_cases(nodes))
    assert problems == [], "\n".join(problems)


async def test_cluster_import_then_delete_are_what_every_read_shows(world: World) -> None:
    make_outside_cluster(world.stack)
    problems = await _run(world, [cluster_import(), cluster_delete()])
    assert problems == [], "\n".join(problems)
