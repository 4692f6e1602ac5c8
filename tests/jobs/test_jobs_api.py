"""Jobs through REST on a podplane-created cluster: the plan's checks (parameters, GPUs, Spot),
a recipe run to Succeeded with its pods, logs, events and output prefix, cancel and delete."""

from __future__ import annotations

import time

from tests.jobs.conftest import CLUSTER, JOBS, created, job, pods, settle, submit
from tests.stack import Stack


async def test_submit_run_and_read_a_recipe(stack: Stack) -> None:
    t0 = time.time()
    group = await created(stack)
    print("created in", time.time() - t0)
    async with stack.client("operator") as api:
        await submit(api, name="ddp", recipe="pytorch-ddp", instance_group=group,
                     params={"epochs": 2})
        settle(stack, 15)
        view = await job(api, "ddp")
        print(view)
        assert view["status"] == "Running", view
        settle(stack, 120)
        view = await job(api, "ddp")
        print(view)
        logs = (await api.get(f"{JOBS}/ddp/logs")).json()
        print(logs)
