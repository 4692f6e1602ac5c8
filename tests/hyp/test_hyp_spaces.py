"""Spaces both ways with the official CLI (`hyp ... hyp-space`, sagemaker-hyperpod 3.12):
what podplane makes, hyp lists and describes; what hyp makes, podplane lists as someone
else's and sees start; hyp's stop is what podplane's view shows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.clusters.helpers import BODY
from tests.groups.conftest import finish
from tests.hyp.conftest import Hyp
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
C = BODY["name"]
SPACES = f"/api/v1/clusters/{C}/spaces"


async def _ok(api: Any, answer: Any) -> None:
    assert answer.status_code == 202, answer.text
    assert (await finish(api, answer.json()))["status"] == "succeeded"


async def test_hyp_and_podplane_see_each_others_spaces(podplane_cluster: Stack,
                                                       hyp_on: Hyp) -> None:
    stack, hyp = podplane_cluster, hyp_on
    async with stack.client("admin") as api:
        await _ok(api, await api.patch(f"/api/v1/clusters/{C}/features/spaces",
                                       json={"enabled": True, "confirm": True}))
        await _ok(api, await api.post(SPACES, json={"name": "ours", "storage_gib": 5}))
    hyp.run("set-cluster-context", "--cluster-name", C)
    listed = {s["name"]: s for s in hyp.json("list", "hyp-space", "-o", "json")}
    assert "ours" in listed, listed
    described = hyp.json("describe", "hyp-space", "--name", "ours", "-o", "json")
    assert described["spec"]["displayName"] == "ours"
    assert described["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "podplane"

    hyp.run("create", "hyp-space", "--name", "theirs", "--display-name", "Theirs")
    stack.advance(120)
    async with stack.client("viewer") as api:
        theirs = (await api.get(f"{SPACES}/theirs")).json()
        assert theirs["made_by"] == "other" and theirs["display_name"] == "Theirs", theirs
        assert theirs["created_by"] and theirs["state"] == "Running", theirs

    hyp.run("stop", "hyp-space", "--name", "ours")
    stack.advance(60)
    async with stack.client("viewer") as api:
        ours = (await api.get(f"{SPACES}/ours")).json()
        assert (ours["desired"], ours["state"]) == ("Stopped", "Stopped"), ours
