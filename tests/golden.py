"""Golden worlds: each expensive world (a cluster created by podplane, an imported cluster)
is built once per run, from the code under test with its real create and assertions, and
every test or module that needs one starts a stack on its own copy.

The first xdist worker to take the world's lock builds it under the run's shared temp folder
(`getbasetemp().parent`, keyed by xdist's run id, so nothing outlives the run); the others
wait on the lock and copy. A copy is a stopped stack's whole state (the sandbox's JSON and
moto pickle, each EKS cluster's Kubernetes store, the control plane's database): the
sandbox resumes its virtual clock and seeded RNG from it (World.load), the Kubernetes fleet
re-picks a port when the saved one is taken (KubeFleet._candidate_ports), and the copy's
tests mint tokens of their own (the golden's are named `golden-<role>`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.stack import Stack, running_stack

Build = Callable[[Stack], Awaitable[dict[str, Any]]]
META = "golden.json"  # what the build returned; written last, so it marks a finished world


def _root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    root = base.parent / f"golden-{run}" if run else base / "golden"
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def _claimed(factory: pytest.TempPathFactory, kind: str) -> Iterator[Path | None]:
    """Under the world's lock: the folder to build it in, or None when it is built already.
    The builder returns its metadata, written with `_finish` (which marks the world done)."""
    root = _root(factory)
    with (root / f"{kind}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait for the one building
        if (root / kind / META).exists():
            yield None
            return
        work = root / f"{kind}.building"
        shutil.rmtree(work, ignore_errors=True)  # a build that failed on another worker
        yield work


def _finish(work: Path, kind: str, meta: dict[str, Any]) -> None:
    (work / META).write_text(json.dumps(meta))
    work.rename(work.parent / kind)


async def golden(factory: pytest.TempPathFactory, kind: str, build: Build) -> Path:
    """The folder of this run's `kind` world (a stopped stack), built here if no worker has
    built it yet."""
    with _claimed(factory, kind) as work:
        if work is not None:
            async with running_stack(work, token_prefix="golden") as stack:
                meta = await build(stack)
            _finish(work, kind, meta)
    return _root(factory) / kind


def golden_folder(factory: pytest.TempPathFactory, kind: str,
                  build: Callable[[Path], dict[str, Any]]) -> Path:
    """As `golden`, for worlds that are not a `Stack` (`build` fills the folder it is given)."""
    with _claimed(factory, kind) as work:
        if work is not None:
            _finish(work, kind, build(work))
    return _root(factory) / kind


@asynccontextmanager
async def restored_stack(tmp: Path, factory: pytest.TempPathFactory, kind: str,
                         build: Build) -> AsyncIterator[Stack]:
    """A stack running on a private copy of the `kind` golden world."""
    shutil.copytree(await golden(factory, kind, build), tmp, dirs_exist_ok=True)
    async with running_stack(tmp) as stack:
        yield stack


async def build_created(stack: Stack) -> dict[str, Any]:
    """The cluster tests/clusters/helpers.BODY, created through REST; its only group's name."""
    from tests.clusters.helpers import BODY  # noqa: PLC0415 - test helpers import tests.stack
    from tests.hyp.test_hyp_cluster import create_with_podplane  # noqa: PLC0415

    await create_with_podplane(stack)
    async with stack.client("viewer") as api:
        cluster = (await api.get(f"/api/v1/clusters/{BODY['name']}")).json()
        groups = (await api.get(f"/api/v1/clusters/{BODY['name']}/instance-groups")).json()
    assert cluster["eks"]["status"] == "ACTIVE", cluster  # as tests/clusters/test_create
    assert cluster["hyperpod"]["status"] == "InService", cluster
    return {"group": str(groups[0]["name"])}


@asynccontextmanager
async def created_stack(factory: pytest.TempPathFactory, name: str) -> AsyncIterator[Stack]:
    """A copy of the run's created-cluster world in a new temp folder (for module fixtures)."""
    async with restored_stack(factory.mktemp(name), factory, "created", build_created) as stack:
        yield stack


def builder(kind: str) -> Build:
    """The builder of a golden kind `tests.stack.stack` restores."""
    if kind == "imported":
        from tests.groups.conftest import build_imported  # noqa: PLC0415 - it imports stack

        return build_imported
    assert kind == "created", kind
    return build_created
