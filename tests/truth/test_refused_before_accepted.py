"""Refused before accepted (issue 31): a create or an added group whose nodes and pods cannot
fit one subnet (the largest EC2 allows, a /16) is a 422 at the request naming the limit and
the fix, with no operation started, instead of a 202 that then fails at the network step."""

from __future__ import annotations

import httpx
import pytest

from podplane.domain.subnet_sizing import max_nodes_in_one_subnet
from tests.clusters.helpers import BODY

TOO_MANY = {**BODY, "count": 1000, "instance_type": "ml.g5.8xlarge"}


def refused_for_the_subnet(r: httpx.Response) -> None:
    assert r.status_code == 422, r.text
    problem = r.json()
    assert problem["field"] == "count", problem
    assert "241,016 addresses" in problem["detail"] and "65,531 (a /16)" in problem["detail"]
    most = max_nodes_in_one_subnet("ml.g5.8xlarge")
    assert f"at most {most} nodes" in problem["hint"], problem


@pytest.mark.parametrize("path", ["/api/v1/clusters", "/api/v1/cluster-plans"])
async def test_a_create_whose_nodes_cannot_fit_one_subnet_is_a_422(
        admin: httpx.AsyncClient, path: str) -> None:
    refused_for_the_subnet(await admin.post(path, json=TOO_MANY))
    assert (await admin.get("/api/v1/operations")).json()["items"] == []


async def test_the_largest_group_that_fits_passes_the_check(admin: httpx.AsyncClient) -> None:
    """One node fewer than the limit is not refused for the subnet (it may be for other
    reasons later: this app reaches no cloud)."""
    most = max_nodes_in_one_subnet("ml.g5.8xlarge")
    r = await admin.post("/api/v1/cluster-plans", json={**TOO_MANY, "count": most})
    assert r.status_code != 422 or r.json().get("field") != "count", r.text
