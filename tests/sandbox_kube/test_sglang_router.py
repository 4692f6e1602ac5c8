"""The sandbox's SGLang router, rule by rule, against sgl-router's source (see
podplane_sandbox/kube/sglang_router.py): discovery keeps Running+Ready pods and drops deleted
ones, needs RBAC list/watch on pods, and the cache-aware choice follows the prefix match above
the threshold, the smallest tree below it, and the least loaded worker when imbalanced."""

from __future__ import annotations

import json
from typing import Any

from podplane_sandbox.kube.fake_engine import FakeEngines
from podplane_sandbox.kube.sglang_router import SglangRouters

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"
ARGS = ["--policy", "cache_aware", "--service-discovery", "--selector", "app=w",
        "--service-discovery-namespace", "default", "--service-discovery-port", "30000",
        "--prometheus-port", "29000"]


class Objects:
    """The two reads the router makes of the API server's store."""

    def __init__(self) -> None:
        self.objs: dict[str, list[Obj]] = {}

    def items(self, key: str, ns: str | None = None) -> list[Obj]:
        return [o for o in self.objs.get(key, [])
                if ns is None or o["metadata"].get("namespace") == ns]

    def find(self, key: str, ns: str, name: str) -> Obj | None:
        return next((o for o in self.items(key, ns) if o["metadata"]["name"] == name), None)


def worker(n: int, ready: bool = True) -> Obj:
    return {"metadata": {"name": f"w{n}", "uid": f"uid{n:05d}-x", "namespace": "default",
                         "labels": {"app": "w"}},
            "spec": {"containers": [{"name": "engine", "args": [
                "--model-path", "m", "--served-model-name", "m", "--enable-metrics"],
                "image": "docker.io/lmsysorg/sglang:latest",
                "ports": [{"name": "http", "containerPort": 30000}]}]},
            "status": {"phase": "Running", "podIP": f"10.0.0.{n}", "conditions": [
                {"type": "Ready", "status": "True" if ready else "False"}]}}


def cluster(rbac: bool = True) -> tuple[Objects, SglangRouters, Obj, Obj]:
    store = Objects()
    router = {"metadata": {"name": "r", "uid": "router-1", "namespace": "default"},
              "spec": {"serviceAccountName": "r"}}
    if rbac:
        store.objs[f"{RBAC}/roles"] = [{"metadata": {"name": "r", "namespace": "default"},
                                        "rules": [{"apiGroups": [""], "resources": ["pods"],
                                                   "verbs": ["get", "list", "watch"]}]}]
        store.objs[f"{RBAC}/rolebindings"] = [{
            "metadata": {"name": "r", "namespace": "default"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "r", "namespace": "default"}]}]
    routers = SglangRouters(store, FakeEngines())  # type: ignore[arg-type]
    return store, routers, router, {"name": "router", "args": ARGS}


def send(routers: SglangRouters, router: Obj, container: Obj, prompt: str) -> tuple[int, str]:
    status, _, text = routers.answer(router, container, "30000", "POST", "v1/completions",
                                     json.dumps({"model": "m", "prompt": prompt}).encode())
    return status, (json.loads(text)["id"].split("-")[1] if status == 200 else text)


def test_discovery_keeps_ready_pods_and_drops_deleted_ones() -> None:
    store, routers, router, c = cluster()
    store.objs["pods"] = [worker(1), worker(2, ready=False)]
    assert send(routers, router, c, "hello")[1] == "uid00001"
    state = routers.state["router-1"]
    assert [w.url for w in state.workers.values()] == ["http://10.0.0.1:30000"]
    store.objs["pods"][1] = worker(2)
    store.objs["pods"][0]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert {send(routers, router, c, "hello")[1] for _ in range(3)} == {"uid00002"}
    _, _, text = routers.answer(router, c, "29000", "GET", "metrics", b"")
    assert "sgl_router_active_workers 1.0" in text


def test_without_rbac_the_router_knows_no_worker() -> None:
    store, routers, router, c = cluster(rbac=False)
    store.objs["pods"] = [worker(1)]
    status, text = send(routers, router, c, "hello")
    assert status == 503 and "No available workers" in text


def test_cache_aware_threshold_smallest_tree_and_imbalance() -> None:
    store, routers, router, c = cluster()
    store.objs["pods"] = [worker(1), worker(2)]
    long = "x" * 40
    assert send(routers, router, c, long + "a")[1] == "uid00001"   # both empty: first URL
    assert send(routers, router, c, "y" * 40)[1] == "uid00002"     # miss: smallest tree
    assert send(routers, router, c, long + "b")[1] == "uid00001"   # 40/41 > 0.3: hit
    # 10 of 40 characters shared (0.25 <= 0.3): a miss, to the smaller tree (worker 2)
    assert send(routers, router, c, "x" * 10 + "z" * 30)[1] == "uid00002"
    state = routers.state["router-1"]
    assert (state.hits, state.misses) == (1, 3)
    w1 = next(w for w in state.workers.values() if w.url.endswith(".1:30000"))
    w1.running = 100  # 100 - 0 > 64 and 100 > 0 x 1.5: imbalanced -> least loaded
    assert send(routers, router, c, long + "c")[1] == "uid00002"
    assert state.balancing == 1
    w1.running = 60   # 60 - 0 <= 64: balanced again, the prefix wins
    assert send(routers, router, c, long + "d")[1] == "uid00001"
