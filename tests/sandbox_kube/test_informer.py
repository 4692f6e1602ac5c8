"""Whole-cluster Node and Pod lists kept by a watch (services/observe/informer.py), against the
Kubernetes emulator over its real HTTP API: after the first list, readers cost the API server
no further list requests; a change made by someone else arrives by the watch; a change made
through podplane's own port is seen by the very next read; an informer nobody reads stops.
Waits are on the watch's own events (bounded by a timeout), never on a sleep."""

from __future__ import annotations

import asyncio
import collections
import functools
from collections.abc import AsyncIterator
from typing import Any

import pytest

from podplane.cloud.kube.connector import KubeConnector
from podplane.services.observe.cache import ObservationCache
from podplane.services.observe.ports import ObservedConnector
from podplane_sandbox.kube.handlers import Handlers
from tests.sandbox_kube.conftest import Sandbox
from tests.sandbox_kube.test_kube_connections import connector  # noqa: F401  (fixture)

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "informed", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}


@pytest.fixture
def lists(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """List requests the emulator answered, by path."""
    seen: collections.Counter[str] = collections.Counter()
    original = Handlers.list_objects

    @functools.wraps(original)
    def counted(self: Any, t: Any, q: dict[str, str], want_table: bool) -> Any:
        seen[getattr(t, "kind", None) or str(t)] += 1
        return original(self, t, q, want_table)

    monkeypatch.setattr(Handlers, "list_objects", counted)
    return seen


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def observed(connector: KubeConnector  # noqa: F811
                   ) -> AsyncIterator[tuple[ObservedConnector, Clock]]:
    clock = Clock()
    oc = ObservedConnector(connector, ObservationCache(fast=2.0, slow=10.0, clock=clock))
    yield oc, clock
    oc.informers.close()


def _names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


async def test_readers_after_the_first_list_cost_no_list_request(
        observed: tuple[ObservedConnector, Clock], connector: KubeConnector,  # noqa: F811
        sandbox: Sandbox, lists: collections.Counter[str]) -> None:
    oc, _ = observed
    name = sandbox.api.cluster_name
    kube, direct = await oc.for_cluster(name), await connector.for_cluster(name)
    first = await kube.list("v1", "Node")
    assert _names(first) == _names(await direct.list("v1", "Node")) and len(first) == 4
    before = sum(lists.values())
    for _ in range(50):
        assert _names(await kube.list("v1", "Node")) == _names(first)
    assert sum(lists.values()) == before  # 50 readers, no list request
    (informer,) = oc.informers.by_key.values()
    assert informer.live and informer.lists == 1


async def test_a_change_by_someone_else_arrives_by_the_watch(
        observed: tuple[ObservedConnector, Clock], connector: KubeConnector,  # noqa: F811
        sandbox: Sandbox, lists: collections.Counter[str]) -> None:
    oc, _ = observed
    name = sandbox.api.cluster_name
    kube, direct = await oc.for_cluster(name), await connector.for_cluster(name)
    assert "informed" not in _names(await kube.list("v1", "Pod"))
    (informer,) = oc.informers.by_key.values()
    listed = informer.lists
    changed = asyncio.ensure_future(informer.changed())
    await direct.apply(POD)  # not through the observed port: the cache is not told
    await asyncio.wait_for(changed, 10)
    assert "informed" in _names(await kube.list("v1", "Pod"))
    gone = asyncio.ensure_future(informer.changed())
    await direct.delete("v1", "Pod", "informed", namespace="default")
    await asyncio.wait_for(gone, 10)
    while "informed" in _names(await kube.list("v1", "Pod")):  # graceful: MODIFIED, then DELETED
        await asyncio.wait_for(informer.changed(), 10)
    assert informer.lists == listed  # both changes came by the watch, no list again


async def test_our_own_write_is_seen_by_the_next_read(
        observed: tuple[ObservedConnector, Clock], sandbox: Sandbox) -> None:
    oc, _ = observed
    kube = await oc.for_cluster(sandbox.api.cluster_name)
    node = (await kube.list("v1", "Node"))[0]["metadata"]["name"]
    (informer,) = oc.informers.by_key.values()
    await kube.patch("v1", "Node", node, {"metadata": {"labels": {"podplane.io/seen": "yes"}}})
    found = {n["metadata"]["name"]: n for n in await kube.list("v1", "Node")}
    assert found[node]["metadata"]["labels"]["podplane.io/seen"] == "yes"
    assert informer.lists == 2  # the write made the informer list again before answering


async def test_an_unread_informer_stops_and_the_suite_mode_never_watches(
        observed: tuple[ObservedConnector, Clock], connector: KubeConnector,  # noqa: F811
        sandbox: Sandbox, lists: collections.Counter[str]) -> None:
    oc, clock = observed
    name = sandbox.api.cluster_name
    await (await oc.for_cluster(name)).list("v1", "Node")
    assert oc.informers.reap() == 1
    clock.now += oc.informers.idle_stop + 1
    assert oc.informers.reap() == 0
    plain = ObservedConnector(connector, ObservationCache(fast=0))
    kube = await plain.for_cluster(name)
    before = sum(lists.values())
    for _ in range(3):
        await kube.list("v1", "Node")
    assert sum(lists.values()) == before + 3 and plain.informers.by_key == {}
