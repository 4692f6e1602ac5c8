"""A warm pool on a podplane-created cluster (two one-GPU g5 nodes): endpoints assigned by
label, a scale-in during traffic that removes only the free pod (every request answered, the
serving pod keeps its uid), a scale-in that would need the serving pod refused (409), and an
unassignment that drains before the pod can be deleted: its deletionTimestamp comes after
the last request it answered. Requests stay in flight 30 virtual seconds each (the fake
engine's `busy_seconds`), so they are still running while the operations act."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import pytest_asyncio

from podplane_sandbox.kube.util import parse_iso
from tests.groups.conftest import finish
from tests.inference.conftest import ENDPOINTS, kubectl_json, ready
from tests.jobs.conftest import CLUSTER, settle, store
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
POOLS = f"/api/v1/clusters/{CLUSTER}/pools"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
BUSY = 30.0


def pool_pods(stack: Stack) -> dict[str, dict[str, Any]]:
    """The pool's pods as kubectl lists them, by uid."""
    found = kubectl_json(stack, "get", "pods", "-n", "default", "-l", "podplane.io/pool=warm")
    return {p["metadata"]["uid"]: p for p in found["items"]}


def assigned(stack: Stack, endpoint: str) -> list[dict[str, Any]]:
    return [p for p in pool_pods(stack).values()
            if (p["metadata"].get("labels") or {}).get("podplane.io/assigned") == endpoint]


def running(stack: Stack, pod: dict[str, Any]) -> float:
    """The pod's own gauge, read through the API server's pod proxy as podplane reads it."""
    text = stack.kubectl("get", "--raw", f"/api/v1/namespaces/default/pods/"
                         f"{pod['metadata']['name']}:8000/proxy/metrics")
    line = next(x for x in text.splitlines() if x.startswith("vllm:num_requests_running{"))
    return float(line.rsplit(" ", 1)[1])


async def invoke(api: httpx.AsyncClient, counts: dict[str, int]) -> None:
    counts["sent"] += 1
    r = await api.post(f"{ENDPOINTS}/chat/invoke", json={"prompt": "hello", "max_tokens": 2})
    if r.status_code == 200 and r.json()["response"]["choices"][0]["text"]:
        counts["answered"] += 1


async def in_flight(stack: Stack, api: httpx.AsyncClient, pod: dict[str, Any], n: int,
                    counts: dict[str, int]) -> list[asyncio.Task[None]]:
    """Send n requests and return once the pod's engine counts them running."""
    tasks = [asyncio.create_task(invoke(api, counts)) for _ in range(n)]
    for _ in range(400):  # until they reached the engine (no virtual time passes)
        if running(stack, pod) == n:
            return tasks
        await asyncio.sleep(0.01)
    raise AssertionError(f"{n} requests never reached {pod['metadata']['name']}")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def warm(cluster: tuple[Stack, str]) -> Stack:
    """Pool `warm` of two Ready pods (one per node), endpoint `chat` on one of them."""
    stack, group = cluster
    async with stack.client("operator") as api:
        r = await api.post(POOLS, json={"name": "warm", "instance_group": group,
                                        "model": MODEL, "replicas": 2})
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
        r = await api.post(f"{POOLS}/warm/assign", json={"endpoint": "chat", "pods": 1})
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
    store(stack).engines.busy_seconds = BUSY
    return stack


async def test_assigning_labels_a_warm_pod_and_the_endpoint_answers(warm: Stack) -> None:
    pods = pool_pods(warm)
    assert len(pods) == 2 and all(ready(p) for p in pods.values())
    (serving,) = assigned(warm, "chat")
    svc = kubectl_json(warm, "get", "service", "chat", "-n", "default")
    assert svc["spec"]["selector"] == {"podplane.io/pool": "warm",
                                       "podplane.io/assigned": "chat"}
    async with warm.client("viewer") as api:
        view = (await api.get(f"{POOLS}/warm")).json()
    assert view["free"] == 1 and view["assigned"] == ["chat"]
    assert {p["uid"] for p in view["pods"]} == set(pods)
    counts = {"sent": 0, "answered": 0}
    async with warm.client("operator") as api:
        tasks = await in_flight(warm, api, serving, 1, counts)
        settle(warm, BUSY)
        await asyncio.gather(*tasks)
    assert counts == {"sent": 1, "answered": 1}


async def test_the_endpoint_on_the_pool_is_listed_and_shown(warm: Stack) -> None:
    """Endpoint list and get show it, marked with its pool; replicas are its assigned pods
    as kubectl lists them, not the pool's."""
    (serving,) = assigned(warm, "chat")
    async with warm.client("viewer") as api:
        listed = {e["name"]: e for e in (await api.get(ENDPOINTS)).json()}
        shown = (await api.get(f"{ENDPOINTS}/chat")).json()
        logs = (await api.get(f"{ENDPOINTS}/chat/logs", params={"tail": 3})).json()
    row = listed["chat"]
    # its logs are its assigned pod's only, not the free warm pods'
    assert logs["pods"] == [serving["metadata"]["name"]] and logs["lines"]
    assert "warm" not in listed  # the pool itself is not an endpoint
    assert (row["pool"], row["replicas"], row["ready_replicas"], row["status"]) == \
        ("warm", 1, 1, "Ready")
    assert (row["engine"], row["model"], row["exposure"]) == ("vllm", MODEL, "service")
    assert shown["pool"] == "warm" and shown["service"] == "chat"
    assert [p["name"] for p in shown["pods"]] == [serving["metadata"]["name"]]
    assert shown["pods"][0]["node"] == serving["spec"]["nodeName"]


async def test_scale_update_delete_of_the_pool_endpoint_point_to_the_pool(warm: Stack) -> None:
    """It has no Deployment of its own: each is a 409 naming the pool; nothing changes."""
    before = {uid: p["metadata"].get("labels") for uid, p in pool_pods(warm).items()}
    async with warm.client("admin") as api:
        answers = [await api.patch(f"{ENDPOINTS}/chat", json={"replicas": 2}),
                   await api.patch(f"{ENDPOINTS}/chat", json={"max_model_len": 2048}),
                   await api.delete(f"{ENDPOINTS}/chat", params={"confirm": "true"})]
    for r in answers:
        assert r.status_code == 409, r.text
        assert r.json()["code"] == "endpoint_on_pool" and "'warm'" in r.json()["detail"]
        assert "/pools/warm/assign" in r.json()["hint"]
    assert {uid: p["metadata"].get("labels") for uid, p in pool_pods(warm).items()} == before
    assert kubectl_json(warm, "get", "service", "chat", "-n", "default")["metadata"]["name"]


async def test_scale_in_during_traffic_removes_only_the_free_pod(warm: Stack) -> None:
    (serving,) = assigned(warm, "chat")
    (free,) = [p for p in pool_pods(warm).values() if p is not serving
               and p["metadata"]["uid"] != serving["metadata"]["uid"]]
    counts = {"sent": 0, "answered": 0}
    async with warm.client("operator") as api:
        tasks = await in_flight(warm, api, serving, 6, counts)
        r = await api.patch(f"{POOLS}/warm", json={"replicas": 1})
        assert r.status_code == 202, r.text
        assert r.json()["plan"]["remove"] == [free["metadata"]["name"]]
        done = await finish(api, r.json())
        settle(warm, BUSY)
        await asyncio.gather(*tasks)
    assert done["status"] == "succeeded", done
    print(f"\nrequests during the pool scale-in: {counts['sent']} sent, "
          f"{counts['answered']} answered")
    assert counts == {"sent": 6, "answered": 6}
    settle(warm)
    pods = pool_pods(warm)
    assert list(pods) == [serving["metadata"]["uid"]] and ready(pods[serving["metadata"]["uid"]])
    assert kubectl_json(warm, "get", "deployment", "warm", "-n", "default")["spec"][
        "replicas"] == 1


async def test_a_scale_in_that_needs_the_serving_pod_is_refused(warm: Stack) -> None:
    before = pool_pods(warm)
    async with warm.client("operator") as api:
        r = await api.patch(f"{POOLS}/warm", json={"replicas": 0})
    assert r.status_code == 409, r.text
    problem = r.json()
    assert problem["code"] == "pool_pods_assigned" and "(chat)" in problem["detail"], problem
    assert "Unassign" in problem["hint"]
    assert pool_pods(warm).keys() == before.keys()
    assert kubectl_json(warm, "get", "deployment", "warm", "-n", "default")["spec"][
        "replicas"] == 1


async def test_unassigning_removes_the_endpoint_so_it_needs_admin_and_confirm(warm: Stack
                                                                            ) -> None:
    """pods=0 removes the endpoint and its Service, as endpoint.delete does (ADR 0016):
    an operator gets 403, an admin without confirm 428, and neither changes anything."""
    before, mutating = assigned(warm, "chat"), len(warm.ledger())
    unassign = {"endpoint": "chat", "pods": 0}
    async with warm.client("operator") as operator, warm.client("admin") as admin:
        assert (await operator.post(f"{POOLS}/warm/assign", json=unassign)).status_code == 403
        r = await admin.post(f"{POOLS}/warm/assign", json=unassign)
        assert r.status_code == 428 and r.json()["code"] == "confirmation_required", r.text
        planned = await admin.post(f"{POOLS}/warm/assign", json={**unassign, "dry_run": True})
        assert planned.status_code == 200 and planned.json()["plan"]["to"] == 0, planned.text
        rows = (await admin.get("/api/v1/audit", params={"action": "pool.assign"})).json()
    assert assigned(warm, "chat") == before and len(warm.ledger()) == mutating
    refused = [(a["role"], a["result"]) for a in rows if a["result"].startswith("error")]
    assert refused[:2] == [("admin", "error:confirmation_required"),
                           ("operator", "error:forbidden")], rows


async def test_unassigning_drains_before_the_pod_is_deleted(warm: Stack) -> None:
    (serving,) = assigned(warm, "chat")
    uid = serving["metadata"]["uid"]
    counts = {"sent": 0, "answered": 0}
    async with warm.client("admin") as api:
        tasks = await in_flight(warm, api, serving, 4, counts)
        r = await api.post(f"{POOLS}/warm/assign",
                           json={"endpoint": "chat", "pods": 0, "confirm": True})
        assert r.status_code == 202, r.text
        (row,) = [a for a in (await api.get("/api/v1/audit", params={
            "action": "pool.assign"})).json() if a["operation_id"] == r.json()["id"]]
        assert row["detail"]["authority"] == {"role": "admin", "destroys": True}, row
        done = await finish(api, r.json())
        await asyncio.gather(*tasks)
        assert done["status"] == "succeeded", done
        assert counts == {"sent": 4, "answered": 4}  # every request in flight was answered
        (drained,) = done["result"]["drained"]
        assert drained["uid"] == uid and drained["max_running"] == 4.0
        assert drained["drained_after_seconds"] > 0  # it waited for them to finish
        late = await api.post(f"{ENDPOINTS}/chat/invoke", json={"prompt": "hi"})
        assert late.status_code == 404, late.text  # the endpoint's Service is gone
        last_answered = store(warm).engines.seen(serving).last_answered
        r = await api.patch(f"{POOLS}/warm", json={"replicas": 0})
        assert r.status_code == 202, r.text
        scale = await finish(api, r.json())
    assert scale["status"] == "succeeded", scale
    deleted_at = next(e for e in store(warm).history if e.obj["metadata"].get("uid") == uid
                      and e.obj["metadata"].get("deletionTimestamp"))
    when = parse_iso(deleted_at.obj["metadata"]["deletionTimestamp"])
    assert last_answered is not None and when is not None and when >= last_answered
    print(f"drained pod: last request answered at {last_answered:.0f}, deletion at {when:.0f}")


async def test_delete_the_pool(warm: Stack) -> None:
    async with warm.client("admin") as admin:
        r = await admin.delete(f"{POOLS}/warm", params={"confirm": "true"})
        assert r.status_code == 202, r.text
        assert (await finish(admin, r.json()))["status"] == "succeeded"
    assert pool_pods(warm) == {}
