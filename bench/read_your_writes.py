"""How soon a read shows a change (issue 31, ADR 0013), every figure side by side in one run:

    nice .venv/bin/python bench/read_your_writes.py [--rounds 3]

1. our own write: from the moment a client learns that `job.submit` succeeded (its long-poll
   returns) to the first read of `GET .../jobs/<name>` that shows the job, with the engine's
   fence on (the default) and off (what main did), on one app, the cache at its production
   settings on the real clock;
2. an outside change: an EKS add-on deleted with the AWS API -> the cluster's status says
   `degraded`; a Node label set with the Kubernetes API -> the node list shows it.

One podplane-created cluster in the sandbox (on a thread, clock frozen; the engine steps it)
and the control plane in this process. Reads are issued back to back, so a lag is measured
to within one read (a few ms). Prints figures, never pass/fail.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.clusters.helpers import BODY  # noqa: E402
from tests.golden import build_created  # noqa: E402
from tests.groups.conftest import finish  # noqa: E402
from tests.stack import Stack, running_stack  # noqa: E402
from tests.truth.conftest import production_cache  # noqa: E402

API = f"/api/v1/clusters/{BODY['name']}"
HEALTH = "sagemaker.amazonaws.com/node-health-status"
GIVE_UP = 60.0  # seconds: a lag longer than this is printed as "> 60 s"


async def lag_until(check: Callable[[], Awaitable[bool]], since: float) -> float:
    """Seconds from `since` to the start of the first read that passes `check`."""
    while True:
        began = time.monotonic()
        if await check():
            return max(0.0, began - since)
        if began - since > GIVE_UP:
            return float("inf")
        await asyncio.sleep(0.005)


async def own_write(stack: Stack, group: str, name: str, fenced: bool) -> float:
    engine = stack.app.state.podplane.ops.runner.engine
    fences = list(engine.fences)
    if not fenced:
        engine.fences.clear()  # main's behaviour: the cache is not told
    try:
        async with stack.client("operator") as api, stack.client("admin") as admin:
            job = f"{API}/jobs/{name}"
            assert (await api.get(job)).status_code == 404  # a watcher has its 404 cached
            r = await api.post(f"{API}/jobs", json={"name": name, "recipe": "pytorch-ddp",
                                                     "instance_group": group, "replicas": 1})
            assert (await finish(api, r.json()))["status"] == "succeeded"
            ended = time.monotonic()

            async def shows() -> bool:
                return (await api.get(job)).status_code == 200
            lag = await lag_until(shows, ended)
            gone = await admin.delete(job, params={"confirm": "true"})
            await finish(admin, gone.json())
            return lag
    finally:
        engine.fences[:] = fences


async def addon_deleted(stack: Stack) -> float:
    async with stack.client("viewer") as api, stack.client("admin") as admin:
        assert (await api.get(API)).json()["state"] == "active"
        stack.aws("eks").delete_addon(clusterName=BODY["name"], addonName="cert-manager")
        stack.advance(10 * 60)
        changed = time.monotonic()

        async def shows() -> bool:
            return bool((await api.get(API)).json()["state"] == "degraded")
        lag = await lag_until(shows, changed)
        r = await admin.post(f"{API}/reconcile")
        await finish(admin, r.json())
        return lag


async def node_labelled(stack: Stack, value: str) -> float:
    async with stack.client("viewer") as api:
        nodes = (await api.get(f"{API}/nodes")).json()
        node = next(n["kubernetes_node"] for n in nodes if n["kubernetes_node"])
        stack.kubectl("label", "node", node, f"{HEALTH}={value}", "--overwrite")
        changed = time.monotonic()

        async def shows() -> bool:
            found = (await api.get(f"{API}/nodes")).json()
            mine = next(n for n in found if n["kubernetes_node"] == node)
            return bool(mine["health"]["node_health_status"] == value)
        return await lag_until(shows, changed)


def row(label: str, lags: list[float]) -> str:
    shown = ", ".join("> 60 s" if x == float("inf") else f"{x * 1000:.0f}" for x in lags)
    finite = [x for x in lags if x != float("inf")]
    mid = f"{statistics.median(finite) * 1000:.0f} ms" if finite else "-"
    return f"| {label} | {mid} | {shown} |"


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with running_stack(Path(tmp)) as stack:
            production_cache(stack, time.monotonic)
            group = (await build_created(stack))["group"]
            figures: dict[str, list[float]] = {"on": [], "off": []}
            for i in range(rounds):  # alternated, so load drifts hit both alike
                for mode in ("on", "off"):
                    figures[mode].append(
                        await own_write(stack, group, f"ryw-{mode}-{i}", mode == "on"))
            addon = [await addon_deleted(stack) for _ in range(rounds)]
            labels = [await node_labelled(stack, v) for v in
                      ["UnschedulablePendingReboot", "Schedulable"] * rounds][:rounds]
    print("| what | median | each round (ms) |")
    print("| --- | ---: | --- |")
    print(row("job.submit succeeded -> GET job shows it, fence on (ADR 0013)", figures["on"]))
    print(row("same, fence off (main before ADR 0013)", figures["off"]))
    print(row("EKS add-on deleted outside -> status `degraded`", addon))
    print(row("Node label set with kubectl -> node list shows it", labels))


def _args() -> Any:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(_args().rounds))
