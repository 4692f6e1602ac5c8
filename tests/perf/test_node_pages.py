"""Node lists of a 1,000-node fake fleet through REST: pages, filters, ETag/304, the same body
as the typed model writes, and one cloud read however many ask at once."""

from __future__ import annotations

import asyncio
import gzip
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from podplane.api.routers.nodes import NodeOut
from podplane.services.context import Ctx
from podplane.services.nodes import service as node_service
from podplane.services.observe import ObservationCache, cache_of
from podplane.store import clusters as cluster_rows
from tests.perf.fleet import CLUSTER, GROUPS, build, iid, kind_of, observed_cloud

COUNT = 1000
URL = f"/api/v1/clusters/{CLUSTER}/nodes"


@pytest.fixture
async def fleet(app) -> Any:  # type: ignore[no-untyped-def]
    fakes, hp, kube = build(COUNT)
    cache = ObservationCache(fast=0)  # single flight only, as in production with no retention
    app.state.podplane.cloud = observed_cloud(fakes, cache)
    async with app.state.podplane.sessions.begin() as db:
        await cluster_rows.upsert(db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
                                  hyperpod_cluster_name=CLUSTER, origin="imported",
                                  state="active", spec={}, facts={})
    return hp, kube


def expected_state(i: int) -> str:
    return {"healthy": "healthy", "reboot": "unhealthy", "unregistered": "in_progress"}[kind_of(i)]


async def all_pages(admin: httpx.AsyncClient, **params: Any) -> tuple[list[str], set[str]]:
    ids: list[str] = []
    totals: set[str] = set()
    cursor = None
    for _ in range(COUNT):
        query = {**params, "limit": 128, **({"cursor": cursor} if cursor else {})}
        r = await admin.get(URL, params=query)
        assert r.status_code == 200, r.text
        ids += [n["id"] for n in r.json()]
        totals.add(r.headers["X-Total-Count"])
        cursor = r.headers.get("X-Next-Cursor")
        if cursor is None:
            return ids, totals
    raise AssertionError("the pages never ended")


async def test_pages_cover_the_fleet_once_in_id_order(admin, fleet) -> None:  # type: ignore[no-untyped-def]
    ids, totals = await all_pages(admin)
    assert ids == sorted(iid(i) for i in range(COUNT))
    assert totals == {str(COUNT)}


@pytest.mark.parametrize("health", ["healthy", "unhealthy", "in_progress"])
async def test_health_and_group_filters_match_the_fleet(admin, fleet, health: str) -> None:  # type: ignore[no-untyped-def]
    group = GROUPS[1]
    ids, totals = await all_pages(admin, health=health, instance_group=group)
    wanted = sorted(iid(i) for i in range(COUNT)
                    if expected_state(i) == health and GROUPS[i % 3] == group)
    assert wanted and ids == wanted and totals == {str(len(wanted))}


async def test_gpu_allocation_is_joined_from_the_nodes_pods(admin, fleet) -> None:  # type: ignore[no-untyped-def]
    r = await admin.get(URL, params={"limit": 5, "cursor": iid(100)})
    for node in r.json():
        i = int(node["id"][2:], 16)
        assert node["gpus"] == {"capacity": 8, "allocatable": 8, "allocated": i % 9}
        assert node["kubernetes_node"] == f"hyperpod-{node['id']}"


async def test_etag_answers_304_until_the_fleet_changes(admin, fleet) -> None:  # type: ignore[no-untyped-def]
    hp, _ = fleet
    first = await admin.get(URL, params={"health": "unhealthy"})
    tag = first.headers["ETag"]
    again = await admin.get(URL, params={"health": "unhealthy"},
                            headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    hp.nodes[CLUSTER][10]["InstanceStatus"] = {"Status": "Failure", "Message": "Xid 79"}
    hp.nodes[CLUSTER][11]["InstanceStatus"] = {"Status": "Failure", "Message": "Xid 79"}
    changed = await admin.get(URL, params={"health": "unhealthy"},
                              headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["ETag"] != tag
    assert len(changed.json()) == len(first.json()) + 1  # node 10 was unhealthy already


async def test_the_body_is_what_the_typed_model_writes_and_is_compressed(app, admin, fleet) -> None:  # type: ignore[no-untyped-def]
    r = await admin.get(URL, headers={"Accept-Encoding": "gzip"})
    assert r.headers["Content-Encoding"] == "gzip"
    raw = await admin.get(URL, headers={"Accept-Encoding": "identity"})
    assert len(gzip.compress(raw.content)) < len(raw.content) / 5
    ctx = Ctx(principal=_principal(), app=app.state.podplane)
    typed = TypeAdapter(list[NodeOut]).dump_json(
        TypeAdapter(list[NodeOut]).validate_python(await node_service.list_nodes(ctx, CLUSTER)))
    assert sorted(TypeAdapter(list[NodeOut]).validate_json(raw.content), key=lambda n: n.id) \
        == sorted(TypeAdapter(list[NodeOut]).validate_json(typed), key=lambda n: n.id)
    assert raw.content == TypeAdapter(list[NodeOut]).dump_json(
        TypeAdapter(list[NodeOut]).validate_json(raw.content))


@pytest.mark.parametrize("readers", [1, 100])
async def test_concurrent_readers_cost_one_cloud_read(app, admin, fleet, readers: int) -> None:  # type: ignore[no-untyped-def]
    hp, kube = fleet
    cache = cache_of(app.state.podplane.cloud)
    assert cache is not None
    # retained for one interval, on a clock that does not move during the test
    cache.fast, cache.clock = 5.0, lambda: 0.0
    replies = await asyncio.gather(*(admin.get(URL, params={"limit": 10})
                                     for _ in range(readers)))
    assert {r.status_code for r in replies} == {200}
    # per interval: one DescribeCluster + one ListClusterNodes, one Node list + one Pod list,
    # whether 1 or 100 ask
    assert (hp.reads, kube.reads) == (2, 2)


async def test_bad_filters_are_refused_with_a_problem(admin, fleet) -> None:  # type: ignore[no-untyped-def]
    for params in ({"health": "sick"}, {"limit": 0}, {"cursor": "not a node"}):
        r = await admin.get(URL, params=params)
        assert r.status_code == 422, params
        assert r.headers["content-type"].startswith("application/problem+json")


def _principal() -> Any:
    from podplane.domain.principal import SYSTEM
    return SYSTEM
