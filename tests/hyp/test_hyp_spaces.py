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

    # templates both ways: podplane's is hyp's to list, hyp's is podplane's to list and use
    async with stack.client("admin") as api:
        r = await api.put(f"/api/v1/clusters/{C}/space-templates/lab", json={"max_cpu": "2"})
        assert r.status_code == 200, r.text
    names = {t["metadata"]["name"] for t in hyp.json("list", "hyp-space-template", "-o",
                                                       "json")}
    assert "lab" in names, names
    image = "public.ecr.aws/sagemaker/sagemaker-distribution:3.2.0-cpu"
    (hyp.home / "tpl.yaml").write_text(
        "apiVersion: workspace.jupyter.org/v1alpha1\nkind: WorkspaceTemplate\n"
        "metadata:\n  name: hyp-lab\n  namespace: default\n"
        f"spec:\n  displayName: Hyp lab\n  defaultImage: {image}\n"
        "  resourceBounds:\n    resources:\n      cpu: {min: '0', max: '1'}\n")
    hyp.run("create", "hyp-space-template", "--file", "tpl.yaml")
    async with stack.client("operator") as api:
        listed = {t["name"]: t for t in (await api.get(
            f"/api/v1/clusters/{C}/space-templates")).json()}
        assert (listed["hyp-lab"]["made_by"], listed["hyp-lab"]["max_cpu"]) == ("other", "1")
        r = await api.post(SPACES, json={"name": "bounded", "template": "hyp-lab",
                                         "cpu": "2"})
        assert r.status_code == 422 and r.json()["field"] == "cpu", r.text
