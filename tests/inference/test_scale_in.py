"""A KEDA scale-in during traffic drops no request, on a podplane-created cluster (two one-GPU
nodes), counted as the caller sees it: requests sent through podplane's invoke vs answered.

The sandbox ends a deleted pod as Kubernetes does, as an adversary (pod_termination.py): the
data path keeps sending new requests to the deleted pod for a while (here 30 virtual s), the
preStop hook runs, then SIGTERM, on which vLLM aborts what is in flight; the grace period's
end kills the rest. Requests stay in the engine 30 virtual seconds each (`busy_seconds`).
- The endpoint podplane renders (preStop sleep, grace period; domain/inference/shutdown.py):
  load up -> 2 replicas; load gone, a request every 10 s -> the HPA scales in after its
  cooldown; requests were in flight on the removed pod and reached it after its deletion;
  every request answered.
- The contrast, so the proof can fail: the same Deployment written by hand with no hook, a
  hook shorter than the routing delay, or a grace period that cuts the hook, scaled in with
  kubectl during the same traffic: requests are lost."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from podplane.domain.inference import render
from podplane_sandbox.kube.fake_engine import engines_of
from podplane_sandbox.kube.pod_termination import terminations_of
from podplane_sandbox.kube.util import parse_iso
from tests.groups.conftest import finish
from tests.inference.conftest import ENDPOINTS, kubectl_json, ready
from tests.jobs.conftest import CLUSTER, settle, store
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
AUTO = {"min_replicas": 1, "max_replicas": 2, "metric": "running", "target": 4,
        "cooldown_seconds": 120}
BUSY = 30.0        # virtual seconds each completion stays in the engine
EVERY = 10.0       # one request every 10 virtual s: 3 in flight, under one pod's target
PROPAGATION = 30.0  # the data path routes to a deleted pod this long


def accepted(stack: Stack) -> int:
    """Requests the sandbox's engines took in (finish times recorded per pod)."""
    return sum(len(v) for v in terminations_of(store(stack)).accepted.values())


async def invoke(api: httpx.AsyncClient, name: str, counts: dict[str, Any]) -> None:
    counts["sent"] += 1
    r = await api.post(f"{ENDPOINTS}/{name}/invoke", json={"prompt": "hello", "max_tokens": 2})
    if r.status_code == 200 and r.json()["response"]["choices"][0]["text"]:
        counts["answered"] += 1
    else:
        counts["lost"].append(r.status_code)


async def traffic(stack: Stack, api: httpx.AsyncClient, name: str, steps: int,
                  on_step: Callable[[int], None] = lambda i: None) -> dict[str, Any]:
    """A request every EVERY virtual seconds for `steps` steps, then time for the last ones to
    finish; (sent, answered, status codes of the lost ones)."""
    counts: dict[str, Any] = {"sent": 0, "answered": 0, "lost": []}
    tasks = []
    for i in range(steps):
        before = accepted(stack)
        task = asyncio.create_task(invoke(api, name, counts))
        tasks.append(task)
        for _ in range(500):   # until the engine took it, or it was refused (no time passes)
            if task.done() or accepted(stack) > before:
                break
            await asyncio.sleep(0.01)
        on_step(i)
        settle(stack, EVERY / 2)
        settle(stack, EVERY / 2)
    settle(stack, BUSY + EVERY)
    await asyncio.gather(*tasks)
    return counts


def deletions(stack: Stack, name: str, since: float) -> dict[str, float]:
    """Pods of the endpoint deleted from `since` on: uid -> deletionTimestamp (the store's
    history)."""
    out: dict[str, float] = {}
    for e in store(stack).history:
        meta = e.obj["metadata"]
        when = parse_iso(meta.get("deletionTimestamp"))
        if e.rt_key == "pods" and (meta.get("labels") or {}).get(render.ENDPOINT_LABEL) == name \
                and when is not None and when >= since:
            out.setdefault(meta["uid"], when)
    return out


def pods(stack: Stack, name: str) -> list[dict[str, Any]]:
    """Every pod of the endpoint kubectl lists, terminating ones too."""
    found = kubectl_json(stack, "get", "pods", "-n", "default", "-l",
                         f"{render.ENDPOINT_LABEL}={name}")
    return list(found["items"])


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
async def test_keda_scale_in_during_traffic_drops_no_request(
        cluster: tuple[Stack, str], engine: str) -> None:
    stack, group = cluster
    engines, ends = engines_of(store(stack)), terminations_of(store(stack))
    async with stack.client("operator") as api:
        on = await api.patch(f"/api/v1/clusters/{CLUSTER}/features/keda",
                             json={"enabled": True})
        assert on.status_code in (200, 202), on.text
        if on.status_code == 202:
            assert (await finish(api, on.json()))["status"] == "succeeded"
            settle(stack, 60)
        r = await api.post(ENDPOINTS, json={"name": "auto", "instance_group": group,
                                            "model": MODEL, "engine": engine,
                                            "autoscaling": AUTO})
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
        dep = kubectl_json(stack, "get", "deployment", "auto", "-n", "default")
        pod_spec = dep["spec"]["template"]["spec"]
        hook = pod_spec["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
        assert hook[0] == "sleep" and int(hook[1]) > PROPAGATION + BUSY
        assert pod_spec["terminationGracePeriodSeconds"] > int(hook[1])
        engines.set_load("default", "auto", 20)
        for _ in range(6):
            settle(stack, 15)
        assert len(pods(stack, "auto")) == 2 and all(ready(p) for p in pods(stack, "auto"))
        engines.set_load("default", "auto", 0)
        engines.busy_seconds, ends.propagation = BUSY, PROPAGATION
        since, seen = store(stack).clock.now(), dict[str, int]()

        def terminating(step: int) -> None:   # what kubectl shows meanwhile
            for p in pods(stack, "auto"):
                if p["metadata"].get("deletionTimestamp"):
                    seen[p["metadata"]["uid"]] = p["metadata"]["deletionGracePeriodSeconds"]

        try:
            counts = await traffic(stack, api, "auto", steps=30, on_step=terminating)
        finally:
            engines.busy_seconds, ends.propagation = 0.0, 10.0
    ((victim, deleted_at),) = deletions(stack, "auto", since).items()
    starts = [f - BUSY for f in ends.accepted[victim]]
    in_flight = sum(1 for s in starts if s < deleted_at < s + BUSY)
    late = sum(1 for s in starts if s >= deleted_at)
    print(f"\nKEDA scale-in of {engine} during traffic: {counts['sent']} sent, "
          f"{counts['answered']} "
          f"answered; on the removed pod {in_flight} in flight at its deletion, {late} "
          "routed to it after")
    assert in_flight >= 1 and late >= 1   # the adversary had its chances
    assert seen == {victim: 120}          # Terminating for a while, with the pod's grace
    assert counts == {"sent": 30, "answered": 30, "lost": []}
    assert kubectl_json(stack, "get", "deployment", "auto", "-n", "default")["spec"][
        "replicas"] == 1
    assert [p["metadata"]["uid"] for p in pods(stack, "auto")] != [victim]
    assert len(pods(stack, "auto")) == 1
    async with stack.client("admin") as admin:
        gone = await admin.delete(f"{ENDPOINTS}/auto", params={"confirm": True})
        assert gone.status_code == 202, gone.text
        assert (await finish(admin, gone.json()))["status"] == "succeeded"


@pytest.mark.parametrize(("hook", "grace"), [(None, None), (20, None), (90, 30)],
                         ids=["no-hook", "hook-shorter-than-propagation", "grace-too-short"])
async def test_without_a_long_enough_hook_and_grace_a_scale_in_loses_requests(
        cluster: tuple[Stack, str], tmp_path: Path, hook: int | None,
        grace: int | None) -> None:
    """The same endpoint Deployment and Service written by hand, with no preStop hook, one
    that ends before the data path stopped routing, or a grace period that cuts the hook
    (unset: the pod's default 30 s); scaled in with kubectl during traffic."""
    stack, group = cluster
    request = {"name": "bare", "engine": "vllm", "model": MODEL, "instance_group": group,
               "replicas": 2}
    dep, svc = render.deployment(request), render.service(request)
    pod_spec = dep["spec"]["template"]["spec"]
    del pod_spec["terminationGracePeriodSeconds"], pod_spec["containers"][0]["lifecycle"]
    if hook is not None:
        pod_spec["containers"][0]["lifecycle"] = {
            "preStop": {"exec": {"command": ["sleep", str(hook)]}}}
    if grace is not None:
        pod_spec["terminationGracePeriodSeconds"] = grace
    for kind, manifest in (("deployment", dep), ("service", svc)):
        (tmp_path / f"{kind}.json").write_text(json.dumps(manifest))
        stack.kubectl("apply", "-f", str(tmp_path / f"{kind}.json"))
    for _ in range(6):
        settle(stack, 15)
    assert len(pods(stack, "bare")) == 2 and all(ready(p) for p in pods(stack, "bare"))
    engines, ends = engines_of(store(stack)), terminations_of(store(stack))

    def scale_in(step: int) -> None:
        if step == 5:
            stack.kubectl("scale", "deployment", "bare", "-n", "default", "--replicas=1")

    engines.busy_seconds, ends.propagation = BUSY, PROPAGATION
    async with stack.client("operator") as api:
        try:
            counts = await traffic(stack, api, "bare", steps=12, on_step=scale_in)
        finally:
            engines.busy_seconds, ends.propagation = 0.0, 10.0
    print(f"\nscale-in with hook={hook} grace={grace}: {counts['sent']} sent, "
          f"{counts['answered']} answered, lost with {counts['lost']}")
    assert counts["sent"] == 12 and counts["lost"], counts
    assert counts["answered"] + len(counts["lost"]) == 12
    settle(stack, 120)   # the removed pod's grace period is over
    assert len(pods(stack, "bare")) == 1
    stack.kubectl("delete", "deployment,service", "bare", "-n", "default")
    settle(stack, 120)
    assert pods(stack, "bare") == []
