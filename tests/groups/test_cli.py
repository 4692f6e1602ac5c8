"""The CLI face over real HTTP: `podplane group ...` and `podplane node ...` (the control plane
served by uvicorn on a free port, on the test's loop; the CLI runs in a worker thread)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from typer.testing import CliRunner

from podplane.cli import app as cli
from podplane.cli.remote import out as cli_out
from tests.groups.conftest import FIRST_GROUP, Cluster
from tests.served import serving


@pytest.fixture
async def served(cluster: Cluster) -> AsyncIterator[str]:
    async with serving(cluster.stack.app) as url:
        yield url


async def podplane(cluster: Cluster, url: str, *args: str, role: str = "admin") -> Any:
    # rich sizes a console when it is made (at import, maybe in another test of this worker),
    # so COLUMNS alone may come too late: the tables are read whole here.
    cli_out.width = 200
    env = {"PODPLANE_URL": url, "PODPLANE_TOKEN": cluster.stack.tokens[role], "COLUMNS": "200"}
    return await asyncio.to_thread(CliRunner().invoke, cli, list(args), env=env)


async def test_cli_adds_scales_and_lists_groups_and_nodes(cluster: Cluster, served: str) -> None:
    plan = await podplane(cluster, served, "group", "add", "gpu", "cli-spot", "--type",
                          "ml.g5.8xlarge", "--count", "1", "--capacity", "spot", "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert "CapacityRequirements" in plan.output and cluster.updates() == []

    added = await podplane(cluster, served, "group", "add", "gpu", "cli-spot", "--type",
                           "ml.g5.8xlarge", "--count", "1", "--capacity", "spot")
    assert added.exit_code == 0, added.output
    assert "succeeded" in added.output and "kubernetes" in added.output

    listed = await podplane(cluster, served, "group", "list", "gpu", role="viewer")
    assert "cli-spot" in listed.output and "spot" in listed.output and "1/1" in listed.output

    same = await podplane(cluster, served, "group", "scale", "gpu", "cli-spot", "1")
    assert same.exit_code == 0 and "no change needed" in same.output

    nodes = await podplane(cluster, served, "node", "list", "gpu", "--group", FIRST_GROUP)
    (node,) = cluster.nodes_of(FIRST_GROUP)
    assert node["InstanceId"] in nodes.output and "healthy" in nodes.output

    refused = await podplane(cluster, served, "node", "replace", "gpu", node["InstanceId"])
    assert refused.exit_code == 1 and "confirmation_required" in refused.output
    assert "instance storage" in refused.output
