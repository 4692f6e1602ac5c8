"""A cluster created by podplane itself (training operator, Kubeflow operators, the shared
bucket and its claim all installed by the create pipeline), and helpers that drive the
sandbox's clock and read what Kubernetes shows."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from podplane.domain.jobs import render
from podplane.domain.jobs.requests import restored
from tests.clusters.helpers import BODY
from tests.golden import created_stack
from tests.groups.conftest import finish
from tests.stack import Stack

CLUSTER = BODY["name"]
JOBS = f"/api/v1/clusters/{CLUSTER}/jobs"


async def group_of(stack: Stack) -> str:
    """The name of the cluster's (only) instance group."""
    async with stack.client("viewer") as api:
        groups = (await api.get(f"/api/v1/clusters/{CLUSTER}/instance-groups")).json()
    return str(groups[0]["name"])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Stack, str]]:
    """One stack per test module on its own copy of the run's created cluster (tests/golden.py):
    (stack, the instance group's name). Tests of a module leave no job running."""
    async with created_stack(tmp_path_factory, "jobs") as stack:
        yield stack, await group_of(stack)


def settle(stack: Stack, seconds: float = 0.0) -> None:
    if seconds:
        stack.advance(seconds)
    stack.sandbox.call(stack.sandbox.kube.settle())


def store(stack: Stack) -> Any:
    return stack.sandbox.kube.get(CLUSTER).store


def pods(stack: Stack, **labels: str) -> dict[str, dict[str, Any]]:
    """The pods Kubernetes has with these labels, by name."""
    found = store(stack).items("pods", "default")
    return {p["metadata"]["name"]: p for p in found
            if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())}


def scripts_map(stack: Stack, job: str) -> dict[str, Any] | None:
    """The job's training-scripts ConfigMap as Kubernetes holds it, or None."""
    found = store(stack).find("configmaps", "default", f"{job}-scripts")
    return dict(found) if found is not None else None


def apply_plan(stack: Stack, folder: Path, plan: dict[str, Any], manifest: dict[str, Any]) -> None:
    """What a user applying a dry run's plan with kubectl does: the scripts ConfigMap (a pod
    does not start without it), then the (edited) job manifest."""
    for name, obj in (("scripts", plan.get("config_map")), ("job", manifest)):
        if obj is not None:
            (folder / f"{name}.json").write_text(json.dumps(obj))
            stack.kubectl("apply", "-f", str(folder / f"{name}.json"))


async def submit(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    r = await api.post(JOBS, json=body)
    assert r.status_code == 202, r.text
    done = await finish(api, r.json())
    assert done["status"] == "succeeded", done
    return done


async def job(api: httpx.AsyncClient, name: str) -> dict[str, Any]:
    r = await api.get(f"{JOBS}/{name}")
    assert r.status_code == 200, r.text
    return dict(r.json())


def manifest_from(body: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """The manifest a job.submit operation that stored `body` applies (its apply step)."""
    return render.manifest_from(restored(body), render.Facts(**facts))
