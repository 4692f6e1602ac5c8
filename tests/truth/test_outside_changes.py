"""Changes made outside podplane are not fenced (ADR 0013): an AWS change shows once its
entry's interval and stale allowance have passed (at most 20 s, the docs' bound), a
Kubernetes Node change as soon as the watch delivers it, on the sandbox's real describe and
watch APIs. The cache runs at production retention on the test's clock."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from podplane.services.observe import ObservationCache
from tests.clusters.helpers import BODY
from tests.groups.conftest import finish
from tests.truth.conftest import World

pytestmark = pytest.mark.asyncio(loop_scope="package")
API = f"/api/v1/clusters/{BODY['name']}"
HEALTH = "sagemaker.amazonaws.com/node-health-status"
# The longest a value is served after its read: the still interval plus the stale allowance.
BOUND = ObservationCache().slow * 2


async def state(api: httpx.AsyncClient) -> str:
    r = await api.get(API)
    assert r.status_code == 200, r.text
    return str(r.json()["state"])


async def test_an_addon_deleted_outside_shows_within_the_stated_bound(world: World) -> None:
    stack = world.stack
    async with stack.client("admin") as api:
        assert await state(api) == "active"
        stack.aws("eks").delete_addon(clusterName=BODY["name"], addonName="cert-manager")
        stack.advance(10 * 60)
        assert await state(api) == "active"  # inside the interval: not fenced, as stated
        world.clock.advance(BOUND + 0.1)
        assert await state(api) == "degraded"  # the first read past the bound
        r = await api.post(f"{API}/reconcile")  # put it back for the other modules
        assert (await finish(api, r.json()))["status"] == "succeeded"
        assert await state(api) == "active"  # our own write: at once


async def node_health(api: httpx.AsyncClient, node: str) -> Any:
    r = await api.get(f"{API}/nodes")
    assert r.status_code == 200, r.text
    found = next(n for n in r.json() if n["kubernetes_node"] == node)
    return found["health"]["node_health_status"]


async def test_a_node_label_set_with_kubectl_shows_when_the_watch_delivers_it(
        world: World) -> None:
    stack = world.stack
    async with stack.client("viewer") as api:
        r = await api.get(f"{API}/nodes")
        node = next(n["kubernetes_node"] for n in r.json() if n["kubernetes_node"])
        assert await node_health(api, node) == "Schedulable"
        stack.kubectl("label", "node", node, f"{HEALTH}=UnschedulablePendingReboot",
                      "--overwrite")
        seen = [await node_health(api, node)]
        for _ in range(200):  # the watch's delivery, not the interval: the clock stands still
            if seen[-1] == "UnschedulablePendingReboot":
                break
            await asyncio.sleep(0.02)
            seen.append(await node_health(api, node))
        assert seen[-1] == "UnschedulablePendingReboot", seen
        stack.kubectl("label", "node", node, f"{HEALTH}=Schedulable", "--overwrite")
